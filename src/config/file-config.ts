import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { describeIssues } from '../schema-issues.ts';
import { defaultSettings, type Settings, SettingsSchema } from '../settings.ts';
import { type Config, ConfigError, type LoadConfig } from './config.ts';
import { type DefinitionCache, fileCatalog } from './file-catalog.ts';

/**
 * Reads berth.json and the catalog of a state directory. What was read is kept and read
 * again only when the file changed (its size or time of change), so that a berth api
 * serving many acts does not parse its settings for each.
 */
export function fileConfig(dir: string): LoadConfig {
  const path = join(dir, 'berth.json');
  let kept: { stamp: string; settings: Settings } | undefined;
  const definitions: DefinitionCache = new Map();
  return async (): Promise<Config> => {
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw new ConfigError(`${path} cannot be read: ${reasonOf(error)}`);
    });
    const stamp = info ? `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}` : 'none';
    if (kept?.stamp !== stamp) {
      const read = info ? await readSettings(path) : defaultSettings();
      // The ssh config is named relative to the state directory, as the catalog is.
      const settings =
        read.sshConfig === undefined ? read : { ...read, sshConfig: resolve(dir, read.sshConfig) };
      kept = { stamp, settings };
    }
    const { settings } = kept;
    return { settings, catalog: fileCatalog(resolve(dir, settings.catalog), definitions) };
  };
}

async function readSettings(path: string): Promise<Settings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${path} cannot be read: ${reasonOf(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const result = v.safeParse(SettingsSchema, json);
  if (result.success) return result.output;
  throw new ConfigError(`${path} is not valid: ${describeIssues(result.issues, SettingsSchema)}`);
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
}
