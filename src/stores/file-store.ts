import { randomBytes } from 'node:crypto';
import { access, constants, mkdir, open, readFile, stat, truncate } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { describeIssues } from '../schema-issues.ts';
import { defaultSettings, type Settings, SettingsSchema } from '../settings.ts';
import { emptyState, StateSchema } from '../state.ts';
import { sweepLeftovers, writeFileAtomic } from './atomic-file.ts';
import { fileCatalog } from './file-catalog.ts';
import { type Lock, takeLock } from './lock.ts';
import type { StateLocation } from './state-dir.ts';
import {
  type JournalEntry,
  type KeptPreview,
  StoreError,
  type Stores,
  type Vault,
  type VaultEntry,
} from './stores.ts';

/** How many previews are kept to say what changed when an act is refused. */
const KEPT_PREVIEWS = 64;

const VaultFileSchema = v.object({
  key: v.string(),
  secrets: v.record(
    v.string(),
    v.object({ value: v.string(), origin: v.string(), at: v.string() }),
  ),
});
type VaultFile = v.InferOutput<typeof VaultFileSchema>;

const PreviewsFileSchema = v.array(
  v.object({
    digest: v.string(),
    kind: v.picklist(['take', 'converge']),
    node: v.string(),
    at: v.string(),
    basis: v.unknown(),
  }),
);

/** The files of a state directory, by name. */
const FILES = {
  settings: 'berth.json',
  state: 'state.json',
  vault: 'vault.json',
  journal: 'journal.jsonl',
  previews: 'previews.json',
  lock: 'lock',
} as const;

/**
 * Opens the embedded stores: one state directory, under the lock that every berth
 * process shares. Fails with a StoreError, in words, when the directory cannot be
 * read or written, a file in it is not valid, or the lock cannot be had.
 */
export async function openFileStores(location: StateLocation): Promise<Stores> {
  const dir = await prepareDirectory(location);
  let lock: Lock;
  try {
    lock = await takeLock(join(dir, FILES.lock));
  } catch (error) {
    throw asStoreError(error, `the lock in ${dir} cannot be had`);
  }
  try {
    await sweepTemporaryFiles(dir);
    return await readStores(dir, lock);
  } catch (error) {
    await lock.release().catch(() => {});
    throw asStoreError(error, `${dir} cannot be read`);
  }
}

/** For `status` and `log`: the same files, read without the lock (every write is atomic). */
export async function readFileStores(location: StateLocation) {
  const dir = await checkDirectory(location.dir);
  const settings = await readSettings(dir);
  const state = await readJson(join(dir, FILES.state), StateSchema, emptyState);
  const journalPath = join(dir, FILES.journal);
  return { dir, settings, state, journalPath };
}

async function prepareDirectory(location: StateLocation): Promise<string> {
  if (location.createIfMissing) {
    await mkdir(location.dir, { recursive: true, mode: 0o700 }).catch((error) => {
      throw asStoreError(error, `the state directory ${location.dir} cannot be made`);
    });
  }
  return checkDirectory(location.dir);
}

async function checkDirectory(dir: string): Promise<string> {
  const info = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') {
      throw new StoreError(
        `the state directory ${dir} does not exist; create it, or leave out --state and BERTH_STATE to use the default`,
      );
    }
    throw asStoreError(error, `the state directory ${dir} cannot be read`);
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
  return dir;
}

/**
 * Every write of the stores is made under the lock, so a temporary file found by
 * the lock's holder was left by a writer that died before its rename: it is removed
 * (the vault's would hold secret values).
 */
function sweepTemporaryFiles(dir: string) {
  return sweepLeftovers(dir, [FILES.settings, FILES.state, FILES.vault, FILES.previews]);
}

async function readStores(dir: string, lock: Lock): Promise<Stores> {
  const settings = await readSettings(dir);
  let state = await readJson(join(dir, FILES.state), StateSchema, emptyState);
  const vaultPath = join(dir, FILES.vault);
  await refuseOpenVault(vaultPath);
  const vaultExists = await stat(vaultPath).then(
    () => true,
    () => false,
  );
  const vaultFile = await readJson(
    vaultPath,
    VaultFileSchema,
    () => ({ key: randomBytes(32).toString('base64'), secrets: {} }),
    { holdsSecrets: true },
  );
  let previews = await readJson(join(dir, FILES.previews), PreviewsFileSchema, () => []);
  const journalPath = join(dir, FILES.journal);
  await mendJournal(journalPath);

  /** Every write checks that the lock is still ours before it changes anything. */
  async function checkLockHeld() {
    if (!(await lock.stillHeld())) {
      throw new StoreError(`the lock in ${dir} was taken from this process; nothing was written`);
    }
  }
  async function write(name: string, data: string, mode?: number) {
    await checkLockHeld();
    await writeFileAtomic(join(dir, name), data, mode);
  }

  return {
    settings,
    catalog: fileCatalog(resolve(dir, settings.catalog)),
    vault: fileVault(vaultFile, vaultExists, (data) => write(FILES.vault, data, 0o600)),
    state: () => state,
    async saveState(next) {
      await write(FILES.state, `${JSON.stringify(next, null, 1)}\n`);
      state = next;
    },
    async journal(entry: JournalEntry) {
      await checkLockHeld();
      const file = await open(journalPath, 'a', 0o600);
      try {
        await file.appendFile(`${JSON.stringify(clipped(entry))}\n`);
        await file.sync();
      } finally {
        await file.close();
      }
    },
    async keepPreview(preview: KeptPreview) {
      const next = [...previews.filter((kept) => kept.digest !== preview.digest), preview];
      await write(FILES.previews, JSON.stringify(next.slice(-KEPT_PREVIEWS)));
      previews = next.slice(-KEPT_PREVIEWS);
    },
    findPreview: (digest) => previews.find((kept) => kept.digest === digest),
    close: () => lock.release(),
  };
}

function fileVault(file: VaultFile, exists: boolean, save: (data: string) => Promise<void>): Vault {
  let saved = exists;
  return {
    fingerprintKey: async () => {
      // A new key must be kept before any fingerprint made with it is.
      if (!saved) {
        await save(JSON.stringify(file));
        saved = true;
      }
      return new Uint8Array(Buffer.from(file.key, 'base64'));
    },
    get(node, module, secret) {
      const kept = file.secrets[`${node}/${module}/${secret}`];
      if (!kept) return undefined;
      return {
        value: new Uint8Array(Buffer.from(kept.value, 'base64')),
        origin: kept.origin,
        at: kept.at,
      };
    },
    onNode(node) {
      return Object.entries(file.secrets)
        .filter(([key]) => key.startsWith(`${node}/`))
        .map(([key, kept]) => {
          const [, module = '', secret = ''] = key.split('/');
          return { module, secret, value: new Uint8Array(Buffer.from(kept.value, 'base64')) };
        });
    },
    async put(node, module, secret, entry: VaultEntry) {
      const next: VaultFile = {
        key: file.key,
        secrets: {
          ...file.secrets,
          [`${node}/${module}/${secret}`]: {
            value: Buffer.from(entry.value).toString('base64'),
            origin: entry.origin,
            at: entry.at,
          },
        },
      };
      await save(JSON.stringify(next));
      file.secrets = next.secrets;
    },
  };
}

async function readSettings(dir: string): Promise<Settings> {
  return readJson(join(dir, FILES.settings), SettingsSchema, defaultSettings);
}

/**
 * Reads and checks one of the state files. The words of a file that `holdsSecrets` say
 * where it is wrong, never what it holds: the parser and the validator quote what they
 * saw, and in the vault that is a secret value or the fingerprint key.
 */
async function readJson<S extends v.GenericSchema>(
  path: string,
  schema: S,
  missing: () => v.InferOutput<S>,
  { holdsSecrets = false } = {},
): Promise<v.InferOutput<S>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return missing();
    throw asStoreError(error, `${path} cannot be read`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position \d+/.exec(message)?.[0];
    const why = holdsSecrets
      ? `${position ? ` ${position}` : ''} (the parser's words are not shown: they could quote a secret)`
      : `: ${message}`;
    throw new StoreError(`${path} is not valid JSON${why}`);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const why = describeIssues(result.issues, schema, { quoteValues: !holdsSecrets });
    throw new StoreError(`${path} is not valid: ${why}`);
  }
  return result.output;
}

/** The vault must be readable by its owner alone; berth will not use one that is not. */
async function refuseOpenVault(path: string) {
  const info = await stat(path).catch(() => undefined);
  if (info && (info.mode & 0o077) !== 0) {
    throw new StoreError(
      `${path} can be read by others (mode ${(info.mode & 0o777).toString(8)}); make it 0600 (chmod 600 ${path})`,
    );
  }
}

/**
 * The longest a journaled name or text is kept. A refused request can name a node
 * with 60,000 characters; the journal keeps enough to see what was asked.
 */
const JOURNAL_TEXT_LIMIT = 2_000;

function clip(text: string): string {
  return text.length > JOURNAL_TEXT_LIMIT
    ? `${text.slice(0, JOURNAL_TEXT_LIMIT)}… (${text.length} characters)`
    : text;
}

function clipped(entry: JournalEntry): JournalEntry {
  return {
    ...entry,
    node: clip(entry.node),
    module: entry.module === undefined ? undefined : clip(entry.module),
  };
}

/**
 * A crash mid-append can leave a last line without its newline; that act was never
 * acknowledged. The cut line is dropped, however long it is.
 */
async function mendJournal(path: string) {
  const info = await stat(path).catch(() => undefined);
  if (!info || info.size === 0) return;
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(Math.min(info.size, 1 << 16));
    let end = info.size;
    for (let first = true; end > 0; first = false) {
      const start = Math.max(0, end - chunk.length);
      await file.read(chunk, 0, end - start, start);
      const seen = chunk.subarray(0, end - start);
      if (first && seen[seen.length - 1] === 0x0a) return;
      const lastNewline = seen.lastIndexOf(0x0a);
      if (lastNewline >= 0) {
        end = start + lastNewline + 1;
        break;
      }
      end = start;
    }
    await truncate(path, end);
  } finally {
    await file.close();
  }
}

function asStoreError(error: unknown, context: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EROFS'
        ? 'the file system is read-only'
        : (error as Error).message;
  return new StoreError(`${context}: ${reason}`);
}
