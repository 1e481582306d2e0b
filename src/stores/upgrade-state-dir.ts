import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { syncDirectory, temporaryName, writeFileAtomic } from '../fs/atomic-file.ts';
import { isName } from '../model/names.ts';
import { AccountSchema, emptyRecord, ManagedSchema, type NodeRecord } from '../model/state.ts';
import { ownRecord } from '../utils/own-record.ts';
import { readJson, refuseOpenVault } from './json-file.ts';
import { takeLock } from './lock.ts';

/** What an earlier berth kept in one file for every node. */
const OldStateSchema = v.object({
  version: v.literal(1),
  assignments: ownRecord(v.string(), v.array(v.string())),
  managed: ownRecord(v.string(), ownRecord(v.string(), ManagedSchema)),
  accounts: ownRecord(v.string(), AccountSchema),
});
const OldVaultSchema = v.object({
  key: v.string(),
  /** By `node/module/secret`. */
  secrets: ownRecord(
    v.string(),
    v.object({ value: v.string(), origin: v.string(), at: v.string() }),
  ),
});

const OLD_FILES = ['state.json', 'vault.json', 'previews.json'] as const;
/** Where the old files are kept once upgraded: nothing of theirs is deleted. */
const RETIRED = 'before-upgrade';

/**
 * Upgrades a state directory of earlier berth's layout (one state.json, vault.json and
 * previews.json for every node) to a directory a node. The new `nodes/` is written in
 * full beside the old files and then renamed into place in one step, so a crash at any
 * moment leaves either the old layout whole or the new one whole. The old files are then
 * moved to `before-upgrade/`; the old journal stays where it is, as the history before.
 * The kept previews are not carried over: they only served the words of a refused act,
 * and held every definition whole (see decisions.md).
 */
export async function upgradeOldLayout(dir: string) {
  if (!(await exists(join(dir, 'state.json')))) return;
  const lock = await takeLock(join(dir, 'lock'), { node: '(every node)', act: 'upgrade' });
  try {
    if (!(await exists(join(dir, 'state.json')))) return;
    await sweepStaging(dir);
    if (!(await exists(join(dir, 'nodes')))) await writeNewLayout(dir);
    await mkdir(join(dir, RETIRED), { recursive: true, mode: 0o700 });
    for (const name of OLD_FILES) {
      if (await exists(join(dir, name))) await rename(join(dir, name), join(dir, RETIRED, name));
    }
    await syncDirectory(dir);
  } finally {
    await lock.release();
  }
}

/** A staging directory's name: `.nodes.<12 hex>.tmp`. */
const STAGING = /^\.nodes\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes what an upgrade that died before its rename left: a staging directory is never
 * read, and the old files it was made from are still whole, so the upgrade starts over.
 * Called under the directory's lock, so no upgrade is writing one now.
 */
async function sweepStaging(dir: string) {
  for (const name of await readdir(dir)) {
    if (STAGING.test(name)) await rm(join(dir, name), { recursive: true, force: true });
  }
}

async function writeNewLayout(dir: string) {
  const state = await readJson(join(dir, 'state.json'), OldStateSchema, () => undefined);
  if (!state) return;
  await refuseOpenVault(join(dir, 'vault.json'));
  const vault = await readJson(join(dir, 'vault.json'), OldVaultSchema, () => undefined, {
    holdsSecrets: true,
  });

  const records = new Map<string, NodeRecord>();
  const recordOf = (node: string) => {
    const record = records.get(node) ?? emptyRecord();
    records.set(node, record);
    return record;
  };
  for (const [node, modules] of Object.entries(state.assignments))
    recordOf(node).assigned = modules;
  for (const [node, managed] of Object.entries(state.managed)) recordOf(node).managed = managed;
  for (const [node, account] of Object.entries(state.accounts)) recordOf(node).account = account;
  const secrets = new Map<string, Record<string, unknown>>();
  for (const [key, entry] of Object.entries(vault?.secrets ?? {})) {
    const [node = '', module = '', secret = ''] = key.split('/');
    recordOf(node);
    secrets.set(node, { ...secrets.get(node), [`${module}/${secret}`]: entry });
  }

  const staging = join(dir, temporaryName('nodes')); // see STAGING
  await mkdir(staging, { mode: 0o700 });
  try {
    for (const [node, record] of records) {
      if (!isName(node)) continue;
      const here = join(staging, node);
      await mkdir(here, { mode: 0o700 });
      await writeFileAtomic(join(here, 'record.json'), `${JSON.stringify(record, null, 1)}\n`, {
        mode: 0o600,
      });
      if (vault) {
        // The node keeps the directory's fingerprint key, so fingerprints already kept
        // in its account and previews still compare.
        const kept = { key: vault.key, secrets: secrets.get(node) ?? {} };
        await writeFileAtomic(join(here, 'vault.json'), JSON.stringify(kept), { mode: 0o600 });
      }
    }
    await syncDirectory(staging);
    await rename(staging, join(dir, 'nodes'));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
