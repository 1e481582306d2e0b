import { type BigIntStats, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import {
  defaultSettings,
  type Settings,
  SettingsSchema,
  settingsProblem,
} from '../model/settings.ts';
import { describeIssues } from '../utils/schema-issues.ts';
import { type Config, ConfigError, type LoadConfig } from './config.ts';
import { type DefinitionCache, fileCatalog } from './file-catalog.ts';
import { INDEXED_FROM, readIndexed, SETTLED_MS, writeIndex } from './inventory-index.ts';

/**
 * Reads berth.json and the catalog of a state directory. What was read is kept and read
 * again only when the file changed (its stamp: device, inode, size, times of modification
 * and change), so that a berth api serving many acts does not parse its settings for
 * each. A large berth.json is indexed (`inventory-index.ts`), so that a command on one
 * node reads that node's entry, not the whole inventory. `now` is the clock the settling
 * of berth.json is measured by.
 */
export function fileConfig(dir: string, now: () => number = Date.now): LoadConfig {
  const path = join(dir, 'berth.json');
  const cacheDir = join(dir, 'cache', 'inventory');
  let kept: { stamp: string; settings: Settings } | undefined;
  const definitions: DefinitionCache = new Map();
  const configOf = (read: Settings): Config => {
    // The ssh config is named relative to the state directory, as the catalog is.
    const settings =
      read.sshConfig === undefined ? read : { ...read, sshConfig: resolve(dir, read.sshConfig) };
    return { settings, catalog: fileCatalog(resolve(dir, settings.catalog), definitions) };
  };
  return async (nodes) => {
    let info: BigIntStats | undefined;
    try {
      // Once an act: made in place, as the stores' small calls are (see syncToDisk).
      info = statSync(path, { bigint: true, throwIfNoEntry: false });
    } catch (error) {
      throw new ConfigError(`${path} cannot be read: ${reasonOf(error)}`);
    }
    if (!info) return configOf(defaultSettings());
    const stamp = [info.dev, info.ino, info.size, info.mtimeNs, info.ctimeNs].join('-');
    if (kept?.stamp === stamp) return configOf(kept.settings);
    const indexed = info.size >= INDEXED_FROM;
    if (indexed && nodes !== undefined) {
      const found = await readIndexed(cacheDir, stamp, nodes);
      if (found) return configOf(found);
    }
    const settings = await readSettings(path);
    kept = { stamp, settings };
    const changedAt = Number(info.ctimeMs > info.mtimeMs ? info.ctimeMs : info.mtimeMs);
    if (indexed && now() - changedAt > SETTLED_MS) await writeIndex(cacheDir, stamp, settings);
    return configOf(settings);
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
  if (result.success) {
    const problem = settingsProblem(result.output);
    if (problem === undefined) return result.output;
    throw new ConfigError(`${path} is not valid: ${problem}`);
  }
  throw new ConfigError(`${path} is not valid: ${describeIssues(result.issues, SettingsSchema)}`);
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
}
