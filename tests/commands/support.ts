import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { digestOf, type World } from '../helpers/world.ts';

/**
 * Everything under a directory as one comparable value: each path with its kind,
 * mode, modification time and a hash of its content. Two equal snapshots mean
 * nothing was created, removed, rewritten or re-moded in between.
 */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string, shown: string) => {
    const info = await stat(path);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isDirectory()) {
      out[shown || '/'] = `dir ${mode} ${info.mtimeMs}`;
      for (const name of (await readdir(path)).sort())
        await walk(join(path, name), `${shown}/${name}`);
    } else {
      const hash = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
      out[shown] = `file ${mode} ${info.mtimeMs} ${hash}`;
    }
  };
  await walk(dir, '');
  return out;
}

/** The permission bits of a file, as octal text: "600". */
export async function modeOf(path: string): Promise<string> {
  return ((await stat(path)).mode & 0o777).toString(8);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Previews a command and returns the digest on its last line. */
export async function previewDigest(world: World, ...args: string[]): Promise<string> {
  const preview = await world.berth(...args);
  if (preview.code !== 0) throw new Error(`preview failed: ${preview.stderr}`);
  return digestOf(preview.stdout);
}

/** Every file of the state directory, as text: where a secret must never appear but in the vault. */
export async function stateFiles(world: World): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of await readdir(world.state)) {
    const info = await stat(join(world.state, name));
    if (info.isFile()) files[name] = await readFile(join(world.state, name), 'utf8');
  }
  return files;
}

/** The values in the vault, by `node/module/secret`, decoded. */
export async function vaultValues(world: World): Promise<Record<string, string>> {
  const vault = JSON.parse(await readFile(join(world.state, 'vault.json'), 'utf8')) as {
    secrets: Record<string, { value: string; origin: string }>;
  };
  return Object.fromEntries(
    Object.entries(vault.secrets).map(([key, entry]) => [
      key,
      Buffer.from(entry.value, 'base64').toString('utf8'),
    ]),
  );
}
