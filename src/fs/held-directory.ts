import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';

/**
 * Linux's O_PATH, which fs.constants leaves out: a descriptor that only holds a place in
 * the tree, so a directory berth may search but not list can still be held.
 */
const O_PATH = 0o10000000;

/**
 * A directory held open by its descriptor, the way systemd's chase() holds them: a name
 * inside it is looked up in it and nowhere else, whatever is renamed or swapped for a
 * link above it meanwhile.
 */
export interface HeldDirectory {
  fd: number;
  /** fstat of what was opened: its owner and mode decide what in it may be trusted. */
  stats: Stats;
  /** Its machine path, as the walk reached it, for words. */
  at: string;
}

/**
 * `name` inside the held directory, as a path any call takes: on Linux,
 * /proc/self/fd/N/name is looked up as openat(N, name) is, and the calls that do not
 * follow a last link (lstat, open with O_NOFOLLOW, mkdir, rename, unlink) do not follow it.
 */
export function inside(dir: HeldDirectory, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Holds the directory at `path` itself: a rooted machine's root, which its operator names. */
export function holdRoot(path: string): HeldDirectory {
  const fd = openSync(path, O_PATH | constants.O_DIRECTORY);
  return held(fd, '/');
}

/**
 * Holds the directory `name` inside `dir`, never through a link: a link there (swapped in
 * since it was looked at, say) fails the open with ELOOP or ENOTDIR.
 */
export function holdBelow(dir: HeldDirectory, name: string, at: string): HeldDirectory {
  const fd = openSync(inside(dir, name), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  return held(fd, at);
}

/**
 * Opens the held directory itself for what a place-holding descriptor cannot do (list,
 * fsync, fchown, fchmod): through /proc its own inode, never a path looked up again.
 */
export function reopen(dir: HeldDirectory): number {
  return openSync(`/proc/self/fd/${dir.fd}`, constants.O_RDONLY | constants.O_DIRECTORY);
}

export function release(dir: HeldDirectory) {
  closeSync(dir.fd);
}

function held(fd: number, at: string): HeldDirectory {
  try {
    return { fd, stats: fstatSync(fd), at };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
