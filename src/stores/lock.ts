import {
  type BigIntStats,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { hostname } from 'node:os';
import * as v from 'valibot';
import { writeAll } from '../fs/atomic-file.ts';
import {
  type LockHolder,
  LockHolderSchema,
  LockTimeout,
  lockNotHad,
  StoreError,
} from './stores.ts';
import { type Lines, waitTurn } from './turns.ts';

export const LOCK_WAIT_MS = 10_000;

/** This machine's name, as every lock taken here names it: asked once, not at each act. */
let host: string | undefined;
const thisHost = () => {
  host ??= hostname();
  return host;
};

/**
 * What a lock file holds: its holder, and a nonce that tells this taking from another.
 * A lock of an earlier berth names only pid and host; it is still a live holder's.
 */
const OwnerSchema = v.object({
  ...LockHolderSchema.entries,
  act: v.optional(v.string(), 'an act'),
  node: v.optional(v.string(), ''),
  since: v.optional(v.string(), 'a moment unknown'),
  nonce: v.optional(v.string(), ''),
});
type Owner = v.InferOutput<typeof OwnerSchema>;

/** A held lock; `release` lets the next berth process in. */
export interface Lock {
  /** Whether a dead holder's lock was taken over: its writes may have left temporary files. */
  tookOver: boolean;
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

/** What a lock is taken for: named in the lock, and in the words of whoever waits on it. */
export interface Purpose {
  node: string;
  act: string;
}

/** Requests in one process take turns here first, lock by lock (see turns.ts). */
const lines: Lines = new Map();

/**
 * Takes the exclusive lock that every berth process on this machine shares for one
 * path: a lock file created with O_EXCL, naming its holder. A lock whose holder died (a
 * berth killed mid-act) is taken over; a live holder is waited on for at most `waitMs`.
 * Waiting in this process's line counts against the same deadline: an act of this process
 * that runs a long hook must hold the next request no longer than it holds another
 * process. Past the deadline the lock file is tried once, and its holder named.
 */
export async function takeLock(
  path: string,
  purpose: Purpose,
  waitMs = LOCK_WAIT_MS,
): Promise<Lock> {
  const deadline = Date.now() + waitMs;
  const turn = await waitTurn(lines, path, waitMs);
  try {
    const lock = await takeFileLock(path, purpose, deadline, waitMs);
    return { ...lock, release: () => lock.release().finally(() => turn.pass()) };
  } catch (error) {
    turn.pass();
    throw error;
  }
}

async function takeFileLock(
  path: string,
  purpose: Purpose,
  deadline: number,
  waitMs: number,
): Promise<Lock> {
  const me: Owner = {
    pid: process.pid,
    host: thisHost(),
    act: purpose.act,
    node: purpose.node,
    since: new Date().toISOString(),
    // Web Crypto's global, as node:crypto would load at every start.
    nonce: Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex'),
  };
  const mine = JSON.stringify(me);
  let holder: Owner | undefined;
  let tookOver = false;
  for (let attempt = 0; ; attempt++) {
    try {
      // Made in place, as every call on a lock is: see syncToDisk.
      const fd = openSync(path, 'wx', 0o600);
      let made: string;
      try {
        writeAll(fd, mine);
        made = identityOf(fstatSync(fd, { bigint: true }));
      } finally {
        closeSync(fd);
      }
      // The very file this taking made: a lock taken over is another file, even one
      // that reuses the inode. One stat, not a read of the file, before every write.
      const isMine = () => {
        const now = statSync(path, { bigint: true, throwIfNoEntry: false });
        return now !== undefined && identityOf(now) === made;
      };
      return {
        tookOver,
        stillHeld: async () => isMine(),
        release: async () => {
          if (isMine()) unlinkSync(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`the lock ${path} cannot be made: ${(error as Error).message}`);
      }
    }
    const seen = readText(path);
    holder = parseOwner(seen);
    if (seen !== undefined && isAbandoned(path, holder)) {
      takeOver(path, seen);
      tookOver = true;
      continue;
    }
    if (Date.now() >= deadline) throw new LockTimeout(lockNotHad(holder, purpose.node, waitMs));
    await sleep(Math.min(5 + attempt * 5, 50) + Math.random() * 10);
  }
}

/** What tells one lock file from another at the same path: nothing writes a lock once made. */
function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/** A lock file's text; undefined when it is gone (or cannot be read: then no owner is known). */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseOwner(text: string | undefined): Owner | undefined {
  if (!text) return undefined;
  try {
    const owner = v.safeParse(OwnerSchema, JSON.parse(text));
    return owner.success ? owner.output : undefined;
  } catch {
    return undefined;
  }
}

/** Who holds the lock at `path` now, if anyone does. */
export async function lockHolder(path: string): Promise<LockHolder | undefined> {
  const owner = parseOwner(readText(path));
  if (!owner) return undefined;
  const { nonce: _, ...holder } = owner;
  return holder;
}

/** How long ago a file was last written; 0 when it is gone. */
function ageOf(path: string): number {
  const info = statSync(path, { throwIfNoEntry: false });
  return info ? Date.now() - info.mtimeMs : 0;
}

function removeIfThere(path: string) {
  try {
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}

function isAbandoned(path: string, owner: Owner | undefined): boolean {
  // A lock file without a readable owner: its writer died between create and write.
  if (!owner) return ageOf(path) > 2_000;
  if (owner.host !== thisHost()) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** A takeover guard older than this was left by a process that died taking over. */
const GUARD_STALE_MS = 5_000;

/**
 * Removes a dead owner's lock. Takeovers are serialised by a guard file, and under
 * it the lock is removed only if it is still the very one seen and still abandoned,
 * so a live lock is never moved, not even for a moment: two processes that both saw
 * the same dead owner cannot take the lock from the one of them that got it first.
 */
function takeOver(path: string, seen: string) {
  const guard = `${path}.takeover`;
  try {
    closeSync(openSync(guard, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' && ageOf(guard) > GUARD_STALE_MS)
      removeIfThere(guard);
    return;
  }
  try {
    const now = readText(path);
    if (now === seen && isAbandoned(path, parseOwner(now))) unlinkSync(path);
  } finally {
    removeIfThere(guard);
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
