import { randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  mode?: number;
  uid?: number;
  gid?: number;
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
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temporary, 'wx', mode);
  try {
    await file.writeFile(data);
    if (uid !== undefined || gid !== undefined) await file.chown(uid ?? -1, gid ?? -1);
    // After a chown, which clears set-id bits, and past the umask.
    await file.chmod(mode);
    await file.sync();
  } catch (error) {
    await file.close();
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await file.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(path));
}

export async function syncDirectory(dir: string) {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Removes from `dir` the temporary files that writes of the files `names` left when their
 * writer died before its rename (a secret's would hold the secret). Only a caller that
 * knows no other write of those files is under way, one holding berth's lock, may call it.
 */
export async function sweepLeftovers(dir: string, names: readonly string[]) {
  const leftover = /^\.(.+)\.[0-9a-f]{12}\.tmp$/;
  for (const name of await readdir(dir).catch(() => [])) {
    const of = leftover.exec(name)?.[1];
    if (of !== undefined && names.includes(of)) await unlink(join(dir, name)).catch(() => {});
  }
}
