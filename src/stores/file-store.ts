import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { access, constants, mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import type { StateLocation } from '../config/state-dir.ts';
import { sweepLeftovers, writeFileAtomic, writeFileOnce } from '../fs/atomic-file.ts';
import { isName } from '../model/names.ts';
import { emptyRecord, type NodeRecord, NodeRecordSchema } from '../model/state.ts';
import { processSeal } from '../vault/process-seal.ts';
import type { Seal } from '../vault/seal.ts';
import { fileVault, noSealedVault, readVaultFile, sealVaultFile } from './file-vault.ts';
import { appendLine } from './journal-file.ts';
import { readJson, refuseOpenVault, storeErrorOf } from './json-file.ts';
import { keptCa, resealedCa, type SealedCa } from './kept-ca.ts';
import { LOCK_WAIT_MS, type Lock, lockHolder, takeLock } from './lock.ts';
import { isPreviewFile, previewFiles } from './preview-files.ts';
import {
  clippedEntry,
  type JournalLine,
  type KeptSurvey,
  KeptSurveySchema,
  type LockHolder,
  type NodeStore,
  parseJournalLine,
  queriedJournals,
  StoreError,
  type Stores,
} from './stores.ts';
import { upgradeOldLayout } from './upgrade-state-dir.ts';

/**
 * A state directory's files, by name. Each node has a directory of its own under
 * `nodes/`, with its own lock, so acts on different nodes never wait on each other and
 * an act writes only its own node's files.
 */
export const FILES = {
  nodes: 'nodes',
  record: 'record.json',
  vault: 'vault.json',
  /** The kept previews, a file each (see preview-files.ts). */
  previews: 'previews',
  /** The node's newest survey (its converge preview, whole), in place of the one before. */
  survey: 'survey.json',
  /** An earlier berth's kept previews, all in one file: dropped at the node's next preview. */
  earlierPreviews: 'previews.json',
  journal: 'journal.jsonl',
  lock: 'lock',
  /** Says that every node's vault here is sealed: an earlier berth's were sealed when first opened. */
  sealed: 'vaults-sealed',
  /** The state's CA: its certificate, and its key sealed (mode 0600, as a vault). */
  ca: 'ca.json',
} as const;

const CaFileSchema = v.object({ certificate: v.string(), at: v.string(), sealed: v.string() });

/** The state's CA file, or undefined when the state has none yet. */
export async function readCaFile(path: string): Promise<SealedCa | undefined> {
  await refuseOpenVault(path);
  return readJson(path, CaFileSchema, () => undefined, { holdsSecrets: true });
}

/**
 * The embedded stores: one state directory. The directory is checked (and, for the
 * default location, made; for earlier berth's layout, upgraded) when first used, and
 * again after a failure, so a StoreError says in words what is wrong at each use: a
 * directory that cannot be read or written, or a layout that cannot be upgraded. No
 * lock is taken but each act's own node's.
 */
export function fileStores(
  location: StateLocation,
  { lockWaitMs = LOCK_WAIT_MS, seal = processSeal() }: { lockWaitMs?: number; seal?: Seal } = {},
): Stores {
  const { dir } = location;
  const caPath = join(dir, FILES.ca);
  const fresh = async () =>
    !statSync(caPath, { throwIfNoEntry: false }) && (await noSealedVault(join(dir, FILES.nodes)));
  let prepared: Promise<void> | undefined;
  /** The state had no nodes when opened: its first node's directory comes with the mark. */
  let unmarked = false;
  const ready = () => {
    prepared ??= prepareDirectory(location).then(async () => {
      try {
        await upgradeOldLayout(dir);
        unmarked = !(await sealEarlierVaults(dir, seal, lockWaitMs));
      } catch (error) {
        throw storeErrorOf(error, `${dir} cannot be upgraded to this berth's layout`);
      }
    });
    return prepared.catch((error) => {
      prepared = undefined;
      throw error;
    });
  };
  const nodeDir = (node: string) => join(dir, FILES.nodes, node);

  return {
    open: ready,
    async openNode(node, act) {
      await ready();
      if (!isName(node)) throw new StoreError(`${JSON.stringify(node)} is not a node name`);
      const here = nodeDir(node);
      let lock: Lock;
      try {
        // A node's directory made here holds no vault of an earlier berth.
        if (makeNodeDir(here) && unmarked) {
          markSealed(dir);
          unmarked = false;
        }
        lock = await takeLock(join(here, FILES.lock), { node, act }, lockWaitMs);
      } catch (error) {
        throw storeErrorOf(error, `the lock of node ${node} in ${dir} cannot be had`);
      }
      try {
        // Every write is made under the node's lock, so temporary files are left only
        // by a writer that died holding it: the one whose lock was just taken over.
        if (lock.tookOver) {
          await sweepLeftovers(here, [
            FILES.record,
            FILES.vault,
            FILES.survey,
            FILES.earlierPreviews,
          ]);
          await sweepLeftovers(join(here, FILES.previews), isPreviewFile);
        }
        return nodeStore(node, here, lock, seal, fresh);
      } catch (error) {
        await lock.release().catch(() => {});
        throw storeErrorOf(error, `the records of node ${node} in ${dir} cannot be read`);
      }
    },
    async journalUnplaced(entry) {
      await ready();
      const lock = await takeLock(join(dir, FILES.lock), {
        node: entry.node,
        act: entry.act,
      }).catch((error) => {
        throw storeErrorOf(error, `the lock of ${dir} cannot be had`);
      });
      try {
        await appendLine(join(dir, FILES.journal), JSON.stringify(clippedEntry(entry)), {
          mend: true,
        });
      } catch (error) {
        throw storeErrorOf(error, `the journal in ${dir} cannot be written`);
      } finally {
        await lock.release().catch(() => {});
      }
    },
    listNodes: () => ready().then(() => listNodes(dir)),
    async readNode(node) {
      await ready();
      if (!isName(node)) return emptyRecord();
      return readJson(join(nodeDir(node), FILES.record), NodeRecordSchema, emptyRecord);
    },
    async readJournal(query) {
      await ready();
      const journals: { journal: string | null; lines: JournalLine[] }[] = [
        { journal: null, lines: await journalLines(join(dir, FILES.journal)) },
      ];
      // The acts about some nodes alone are in those nodes' journals, and the unplaced
      // acts'; a target (`@web`) may be any node's.
      const nodes = await listNodes(dir);
      const about = query?.about?.every(isName) ? query.about : undefined;
      for (const node of about ? nodes.filter((name) => about.includes(name)) : nodes)
        journals.push({
          journal: node,
          lines: await journalLines(join(nodeDir(node), FILES.journal)),
        });
      return queriedJournals(journals, query);
    },
    async readSurveys(nodes) {
      await ready();
      const surveys: KeptSurvey[] = [];
      for (const node of nodes ? [...new Set(nodes)].filter(isName).sort() : await listNodes(dir)) {
        const survey = await readSurveyFile(join(nodeDir(node), FILES.survey));
        if (survey) surveys.push(survey);
      }
      return surveys;
    },
    async lockHolders(nodes) {
      await ready();
      const holders: LockHolder[] = [];
      for (const node of nodes ? [...new Set(nodes)].filter(isName).sort() : await listNodes(dir)) {
        const holder = await lockHolder(join(nodeDir(node), FILES.lock));
        if (holder) holders.push(holder);
      }
      return holders;
    },
    async readCa() {
      await ready();
      const found = await readCaFile(caPath);
      return found && keptCa(found, seal);
    },
    async keepCa(made) {
      await ready();
      const [sealed = ''] = await seal.seal([made.key], fresh);
      const file: SealedCa = { certificate: made.certificate, at: made.at, sealed };
      await writeFileOnce(caPath, `${JSON.stringify(file, null, 1)}\n`, { mode: 0o600 }).catch(
        (error) => {
          throw storeErrorOf(error, `${caPath} cannot be written`);
        },
      );
      // Ours, or the one another berth kept first.
      const kept = await readCaFile(caPath);
      if (!kept) throw new StoreError(`${caPath} was removed as it was written`);
      return keptCa(kept, seal);
    },
    async resealCa() {
      await ready();
      const found = await readCaFile(caPath);
      if (!found) return { resealed: 0, unopened: [] };
      const { sealed, resealed } = await resealedCa(found, seal);
      if (sealed !== undefined)
        await writeFileAtomic(caPath, `${JSON.stringify({ ...found, sealed }, null, 1)}\n`, {
          mode: 0o600,
        }).catch((error) => {
          throw storeErrorOf(error, `${caPath} cannot be written`);
        });
      return resealed;
    },
    close: async () => {},
  };
}

/** One node's files, read when first asked for and kept for the act; written under its lock. */
function nodeStore(
  node: string,
  here: string,
  lock: Lock,
  seal: Seal,
  fresh: () => Promise<boolean>,
): NodeStore {
  const path = (name: string) => join(here, name);
  let record: NodeRecord | undefined;
  let earlierDropped = false;
  let journalMended = false;

  async function write(name: string, data: string, mode = 0o600) {
    if (!(await lock.stillHeld()))
      throw new StoreError(
        `the lock of node ${node} was taken from this process; nothing was written`,
      );
    await writeFileAtomic(path(name), data, { mode });
  }
  const vault = fileVault(node, path(FILES.vault), (data) => write(FILES.vault, data), seal, fresh);
  const previews = previewFiles(path(FILES.previews), (name, data) =>
    write(join(FILES.previews, name), data),
  );

  return {
    node,
    async record() {
      record ??= await readJson(path(FILES.record), NodeRecordSchema, emptyRecord);
      return record;
    },
    async saveRecord(next) {
      await vault.keepNewKey();
      await write(FILES.record, `${JSON.stringify(next, null, 1)}\n`);
      record = next;
    },
    vault,
    async keepPreview(preview) {
      await vault.keepNewKey();
      await previews.keep(preview);
      if (!earlierDropped) {
        // An earlier berth's previews held every definition whole, and only served the
        // words of a refused act: they are dropped, not read (see decisions.md).
        await unlink(path(FILES.earlierPreviews)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT')
            throw storeErrorOf(error, `${path(FILES.earlierPreviews)} cannot be removed`);
        });
        earlierDropped = true;
      }
    },
    findPreview: (digest) => previews.find(digest),
    async keepSurvey(survey) {
      await write(FILES.survey, JSON.stringify(survey));
    },
    async journal(entry) {
      if (!(await lock.stillHeld()))
        throw new StoreError(
          `the lock of node ${node} was taken from this process; nothing was written`,
        );
      await appendLine(path(FILES.journal), JSON.stringify(clippedEntry(entry)), {
        mend: !journalMended,
      });
      journalMended = true;
    },
    close: () => lock.release(),
  };
}

/**
 * A node's directory: one stat when it is there already, as it is for every act but the
 * first. Says whether it was made.
 */
function makeNodeDir(here: string): boolean {
  if (statSync(here, { throwIfNoEntry: false })) return false;
  mkdirSync(here, { recursive: true, mode: 0o700 });
  return true;
}

/**
 * Seals the vaults an earlier berth wrote (base64, not sealed), each under its node's
 * lock and in one atomic write, so a berth stopped half-way leaves each vault whole,
 * sealed or not, and the next one carries on. Done once: a mark says so after. Says
 * whether the state is marked.
 */
async function sealEarlierVaults(dir: string, seal: Seal, lockWaitMs: number): Promise<boolean> {
  if (statSync(join(dir, FILES.sealed), { throwIfNoEntry: false })) return true;
  // Earlier vaults hold no sealed value: berth may make itself an identity for them.
  const fresh = () => noSealedVault(join(dir, FILES.nodes));
  const nodes = await listNodes(dir);
  // A state without nodes has nothing to seal, and nothing to read for it: it is left as
  // it was (a command refused on a new state writes nothing) until its first node.
  if (nodes.length === 0) return false;
  for (const node of nodes) {
    const here = join(dir, FILES.nodes, node);
    const path = join(here, FILES.vault);
    const found = await readVaultFile(path);
    if (found === undefined || found.sealed === 'age') continue;
    const lock = await takeLock(
      join(here, FILES.lock),
      { node, act: 'seal the vault' },
      lockWaitMs,
    );
    try {
      const now = await readVaultFile(path);
      if (now !== undefined && now.sealed !== 'age')
        await writeFileAtomic(path, JSON.stringify(await sealVaultFile(now, seal, fresh)), {
          mode: 0o600,
        });
    } finally {
      await lock.release().catch(() => {});
    }
  }
  // Marked when there was nothing to seal too (nodes, but no vault yet), or every command
  // would read every node's directory again.
  markSealed(dir);
  return true;
}

/**
 * Marks every vault of the state sealed. A vault made after is sealed as it is made, and
 * one an earlier berth wrote after is sealed when it is next read. Only that the mark is
 * there counts, and it is made in one step (O_EXCL), so it is made in place: a temporary
 * name would cost this command node:crypto, and a reading command may be the first to
 * open the state.
 */
function markSealed(dir: string) {
  try {
    writeFileSync(join(dir, FILES.sealed), 'every vault.json under nodes/ is sealed with age\n', {
      flag: 'wx',
      mode: 0o600,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

async function listNodes(dir: string): Promise<string[]> {
  const names = await readdir(join(dir, FILES.nodes)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw storeErrorOf(error, `${join(dir, FILES.nodes)} cannot be read`);
  });
  return names.filter(isName).sort();
}

/**
 * A node's survey file, or nothing when there is none or it is not one this berth reads
 * (a hand edit, another berth's): a survey is made again by the next preview, and a
 * reader shows the node as not surveyed rather than failing the fleet for it.
 */
export async function readSurveyFile(path: string): Promise<KeptSurvey | undefined> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw storeErrorOf(error, `${path} cannot be read`);
  });
  if (text === undefined) return undefined;
  try {
    const result = v.safeParse(KeptSurveySchema, JSON.parse(text));
    return result.success ? result.output : undefined;
  } catch {
    return undefined;
  }
}

async function journalLines(path: string): Promise<JournalLine[]> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw storeErrorOf(error, `${path} cannot be read`);
  });
  const lines: JournalLine[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.length > 0) lines.push(parseJournalLine(line, `line ${index + 1} of ${path}`));
  });
  return lines;
}

async function prepareDirectory(location: StateLocation): Promise<void> {
  if (location.createIfMissing) {
    await mkdir(location.dir, { recursive: true, mode: 0o700 }).catch((error) => {
      throw storeErrorOf(error, `the state directory ${location.dir} cannot be made`);
    });
  }
  await checkDirectory(location.dir);
}

async function checkDirectory(dir: string): Promise<void> {
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') {
      throw new StoreError(
        `the state directory ${dir} does not exist; create it, or leave out --state and BERTH_STATE to use the default`,
      );
    }
    throw storeErrorOf(error, `the state directory ${dir} cannot be read`);
  });
  if (!info.isDirectory()) throw new StoreError(`the state directory ${dir} is not a directory`);
  await access(dir, constants.R_OK | constants.W_OK | constants.X_OK).catch(
    (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EROFS'
          ? 'it is on a read-only file system'
          : error.code === 'EACCES' || error.code === 'EPERM'
            ? 'permission denied'
            : error.message;
      throw new StoreError(`berth cannot read and write the state directory ${dir}: ${why}`);
    },
  );
}
