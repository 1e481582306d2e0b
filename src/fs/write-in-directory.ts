import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import {
  type AtomicWriteOptions,
  isLeftoverOf,
  syncToDisk,
  temporaryName,
  writeAll,
} from './atomic-file.ts';
import { type HeldDirectory, inside, reopen } from './held-directory.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/**
 * Replaces `name` in the held directory whole, as writeFileAtomic does, with every step in
 * that directory and nothing looked up again by path: the temporary file made new
 * (O_EXCL, O_NOFOLLOW: never a link placed there), given its owner and mode on its own
 * descriptor, renamed within the directory, the directory fsynced. Whoever owns the
 * directory may swap names in it meanwhile; what berth chowns and chmods is its own file.
 */
export async function writeFileIn(
  dir: HeldDirectory,
  name: string,
  data: string | Uint8Array,
  { mode = 0o644, uid, gid }: AtomicWriteOptions,
) {
  const temporary = temporaryName(name);
  const fd = openSync(inside(dir, temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
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
    renameSync(inside(dir, temporary), inside(dir, name));
  } catch (error) {
    try {
      // A link put in its place is removed, never followed.
      unlinkSync(inside(dir, temporary));
    } catch {
      // Renamed, or never made: nothing to remove.
    }
    throw error;
  }
  const readable = reopen(dir);
  try {
    await syncToDisk(readable);
  } finally {
    closeSync(readable);
  }
}

/**
 * Removes from the held directory the temporary files dead writes of `names` left (a
 * secret's would hold the secret); unlink removes a link, never what it points to. Only a
 * caller holding berth's lock, so that no other write of those files is under way, may.
 */
export function sweepLeftoversIn(dir: HeldDirectory, names: readonly string[]) {
  for (const entry of readdirSync(inside(dir, '.'))) {
    if (!isLeftoverOf(entry, names)) continue;
    try {
      unlinkSync(inside(dir, entry));
    } catch {
      // Gone meanwhile.
    }
  }
}
