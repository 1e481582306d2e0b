import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { digestOf, nodeDirs, type World } from '../helpers/world.ts';
import { opened, userIdentityFile } from '../vault/opened.ts';

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

/** Previews a converge of box, then acts on that preview's digest: what an operator types. */
export async function convergeBox(world: World, ...args: string[]) {
  const digest = await previewDigest(world, 'converge', 'box', ...args);
  return world.berth('converge', 'box', ...args, '--yes', '--digest', digest);
}

/** The act on a preview had already: `berth converge box [args] --yes --digest <its digest>`. */
export function actOnPreview(world: World, preview: { stdout: string }, ...args: string[]) {
  return world.berth('converge', 'box', ...args, '--yes', '--digest', digestOf(preview.stdout));
}

/** Previews a command and returns the digest on its last line. */
export async function previewDigest(world: World, ...args: string[]): Promise<string> {
  const preview = await world.berth(...args);
  if (preview.code !== 0) throw new Error(`preview failed: ${preview.stderr}`);
  return digestOf(preview.stdout);
}

/**
 * Every file of the state directory but the catalog, as text, by its path in the
 * directory (`nodes/box/vault.json`): where a secret must never appear but in a vault.
 */
export async function stateFiles(world: World): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (dir: string, shown: string) => {
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      const info = await stat(path);
      if (info.isDirectory() && shown + name !== 'modules') await walk(path, `${shown}${name}/`);
      else if (info.isFile()) files[shown + name] = await readFile(path, 'utf8');
    }
  };
  await walk(world.state, '');
  return files;
}

/** A node's vault file. */
export function vaultPath(world: World, node = 'box'): string {
  return join(world.state, 'nodes', node, 'vault.json');
}

/**
 * The values in every node's vault, by `node/module/secret`, opened by the reference age
 * with the identity berth found as this user.
 */
export async function vaultValues(world: World): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const node of await nodeDirs(world.state)) {
    const text = await readFile(vaultPath(world, node), 'utf8').catch(() => '');
    if (!text) continue;
    const vault = JSON.parse(text) as { secrets: Record<string, { value: string }> };
    for (const [key, entry] of Object.entries(vault.secrets))
      values[`${node}/${key}`] =
        (await opened(entry.value, userIdentityFile()))?.toString('utf8') ?? '';
  }
  return values;
}
