import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsync,
  linkSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  mode?: number;
  uid?: number;
  gid?: number;
}

/**
 * Waits until what was written to `fd` is on the disk. Only this goes to the thread pool:
 * berth's files are small and local, so an open, a write, a rename or a close is made in
 * place, in microseconds, where a trip through the pool would cost more than the call.
 */
export function syncToDisk(fd: number): Promise<void> {
  return new Promise((done, fail) => fsync(fd, (error) => (error ? fail(error) : done())));
}

/**
 * A fresh name for the temporary file of a write of `name`, beside it. Web Crypto's global,
 * as node:crypto would load at every start.
 */
export function temporaryName(name: string): string {
  return `.${name}.${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString('hex')}.tmp`;
}

/** Files by name: a list, or a test of a name. */
export type Names = readonly string[] | ((name: string) => boolean);

/** Whether `entry` is a temporary file a write of one of `names` left behind. */
export function isLeftoverOf(entry: string, names: Names): boolean {
  const of = /^\.(.+)\.[0-9a-f]{12}\.tmp$/.exec(entry)?.[1];
  if (of === undefined) return false;
  return typeof names === 'function' ? names(of) : names.includes(of);
}

/**
 * Replaces a file so that a reader, or a crash at any moment, sees either the old
 * contents or the new, never a mix: temporary file (given its mode and owner before
 * it takes the name), fsync, rename, fsync the directory.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  { mode = 0o644, uid, gid }: AtomicWriteOptions = {},
) {
  const temporary = join(dirname(path), temporaryName(basename(path)));
  const fd = openSync(temporary, 'wx', mode);
  try {
    try {
      writeAll(fd, data);
      if (uid !== undefined || gid !== undefined) fchownSync(fd, uid ?? -1, gid ?? -1);
      // After a chown, which clears set-id bits, and past the umask.
      fchmodSync(fd, mode);
      await syncToDisk(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Renamed, or never made: nothing to remove.
    }
    throw error;
  }
  await syncDirectory(dirname(path));
}

/**
 * Writes a file that is not there yet, whole, once: a temporary file, fsync, then a hard
 * link to its name, which fails when the name is taken. Of writers racing (processes,
 * machines on one file system) one wins, and a reader sees the whole file or none, never
 * one that a later writer replaced. Says whether this writer's file is the one.
 */
export async function writeFileOnce(
  path: string,
  data: string | Uint8Array,
  { mode = 0o644 }: { mode?: number } = {},
): Promise<boolean> {
  const temporary = join(dirname(path), temporaryName(basename(path)));
  const fd = openSync(temporary, 'wx', mode);
  try {
    try {
      writeAll(fd, data);
      fchmodSync(fd, mode);
      await syncToDisk(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  } finally {
    unlinkSync(temporary);
  }
  await syncDirectory(dirname(path));
  return true;
}

/** Writes the whole of `data` at the file's position (a short write is carried on). */
export function writeAll(fd: number, data: string | Uint8Array) {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
}

export async function syncDirectory(dir: string) {
  const fd = openSync(dir, 'r');
  try {
    await syncToDisk(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes from `dir` the temporary files that writes of the files `names` left when their
 * writer died before its rename (a secret's would hold the secret). Only a caller that
 * knows no other write of those files is under way, one holding berth's lock, may call it.
 */
export async function sweepLeftovers(dir: string, names: Names) {
  for (const name of await readdir(dir).catch(() => [])) {
    if (isLeftoverOf(name, names)) await unlink(join(dir, name)).catch(() => {});
  }
}
