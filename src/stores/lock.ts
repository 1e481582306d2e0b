import { randomBytes } from 'node:crypto';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StoreError } from './stores.ts';

const LOCK_WAIT_MS = 10_000;

interface Owner {
  pid: number;
  host: string;
  nonce: string;
  at: string;
}

/** A held lock; `release` lets the next berth process in. */
export interface Lock {
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

/** Requests in one process queue here first, so they do not poll the lock file against each other. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * Takes the exclusive lock that every berth process on this machine shares for one
 * state directory: a lock file created with O_EXCL, naming its owner. A lock whose
 * owner died (a berth killed mid-act) is taken over; a live owner is waited on for
 * at most `waitMs`.
 */
export function takeLock(path: string, waitMs = LOCK_WAIT_MS): Promise<Lock> {
  let letGo: () => void = () => {};
  const turn = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const before = queue;
  queue = before.then(() => turn);
  const deadline = Date.now() + waitMs;
  // Waiting in line counts against the same deadline: an act of this process that runs a
  // long hook must hold the next request no longer than it holds another process. Past
  // the deadline the lock file is tried once, and its holder named.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outOfTime = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  return Promise.race([before, outOfTime])
    .finally(() => clearTimeout(timer))
    .then(() => takeFileLock(path, deadline, waitMs))
    .then(
      (lock) => ({
        stillHeld: lock.stillHeld,
        release: () => lock.release().finally(letGo),
      }),
      (error) => {
        letGo();
        throw error;
      },
    );
}

async function takeFileLock(path: string, deadline: number, waitMs: number): Promise<Lock> {
  const me: Owner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(8).toString('hex'),
    at: new Date().toISOString(),
  };
  const mine = JSON.stringify(me);
  let holder: Owner | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      try {
        await file.writeFile(mine);
      } finally {
        await file.close();
      }
      return {
        stillHeld: async () => (await readFile(path, 'utf8').catch(() => '')) === mine,
        release: async () => {
          if ((await readFile(path, 'utf8').catch(() => '')) === mine) await unlink(path);
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
      continue;
    }
    if (Date.now() >= deadline) {
      const who = holder
        ? `berth process ${holder.pid} on ${holder.host}`
        : 'another berth process';
      throw new StoreError(
        `${who} holds the lock ${path} and did not let go within ${Math.round(waitMs / 1000)}s`,
      );
    }
    await sleep(Math.min(5 + attempt * 5, 50) + Math.random() * 10);
  }
}

function parseOwner(text: string | undefined): Owner | undefined {
  if (!text) return undefined;
  try {
    const owner = JSON.parse(text) as Owner;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
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
