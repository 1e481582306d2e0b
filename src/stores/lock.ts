import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import * as v from 'valibot';
import { type LockHolder, LockHolderSchema, lockNotHad, StoreError } from './stores.ts';
import { type Lines, waitTurn } from './turns.ts';

export const LOCK_WAIT_MS = 10_000;

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
    host: hostname(),
    act: purpose.act,
    node: purpose.node,
    since: new Date().toISOString(),
    nonce: randomBytes(8).toString('hex'),
  };
  const mine = JSON.stringify(me);
  let holder: Owner | undefined;
  let tookOver = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      let made: string;
      try {
        await file.writeFile(mine);
        made = identityOf(await file.stat({ bigint: true }));
      } finally {
        await file.close();
      }
      // The very file this taking made: a lock taken over is another file, even one
      // that reuses the inode. One stat, not a read of the file, before every write.
      const isMine = async () => {
        const now = await stat(path, { bigint: true }).catch(() => undefined);
        return now !== undefined && identityOf(now) === made;
      };
      return {
        tookOver,
        stillHeld: isMine,
        release: async () => {
          if (await isMine()) await unlink(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new StoreError(`the lock ${path} cannot be made: ${(error as Error).message}`);
      }
    }
    const seen = await readFile(path, 'utf8').catch(() => undefined);
    holder = parseOwner(seen);
    if (seen !== undefined && (await isAbandoned(path, holder))) {
      await takeOver(path, seen);
      tookOver = true;
      continue;
    }
    if (Date.now() >= deadline) throw new StoreError(lockNotHad(holder, purpose.node, waitMs));
    await sleep(Math.min(5 + attempt * 5, 50) + Math.random() * 10);
  }
}

/** What tells one lock file from another at the same path: nothing writes a lock once made. */
function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
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
  const owner = parseOwner(await readFile(path, 'utf8').catch(() => undefined));
  if (!owner) return undefined;
  const { nonce: _, ...holder } = owner;
  return holder;
}

async function isAbandoned(path: string, owner: Owner | undefined): Promise<boolean> {
  if (!owner) {
    // A lock file without a readable owner: its writer died between create and write.
    const age = await stat(path).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    return age > 2_000;
  }
  if (owner.host !== hostname()) return false;
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
async function takeOver(path: string, seen: string) {
  const guard = `${path}.takeover`;
  try {
    await (await open(guard, 'wx', 0o600)).close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      const age = await stat(guard).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (age > GUARD_STALE_MS) await unlink(guard).catch(() => {});
    }
    return;
  }
  try {
    const now = await readFile(path, 'utf8').catch(() => undefined);
    if (now === seen && (await isAbandoned(path, parseOwner(now)))) await unlink(path);
  } finally {
    await unlink(guard).catch(() => {});
  }
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
