import { lstatSync, mkdirSync, readlinkSync, type Stats } from 'node:fs';
import { posix } from 'node:path';
import { type HeldDirectory, holdBelow, inside, release } from '../fs/held-directory.ts';
import { MOST_LINKS } from './limits.ts';

/** Root, and the user berth acts as: who may have placed what berth follows. */
const trusted = new Set([0, process.geteuid?.() ?? 0]);

/**
 * Only root may have placed what is in this directory: it is root's, and no other user
 * may write it, or its sticky bit keeps them from renaming what is not theirs.
 */
export function onlyRootWrites(dir: Stats): boolean {
  return trusted.has(dir.uid) && ((dir.mode & 0o022) === 0 || (dir.mode & 0o1000) !== 0);
}

/** A symbolic link only root could have placed: root's, in a directory only root writes. */
function placedByRoot(link: Stats, dir: Stats): boolean {
  return trusted.has(link.uid) && onlyRootWrites(dir);
}

/** Where a walk ended. Every directory in it is the walker's, released when it closes. */
export type Reached =
  /** The path's last name, in the directory that holds it: a link only when not followed. */
  | { kind: 'entry'; dir: HeldDirectory; name: string; stats: Stats; at: string }
  /** Nothing by the path's last name, in a directory that is there. */
  | { kind: 'absent'; dir: HeldDirectory; name: string; at: string }
  /** A directory on the way (`at`) is not there, or is not a directory. */
  | { kind: 'missing'; at: string; why: 'absent' | 'not a directory' }
  /** A symbolic link another user could have placed, at the path or above it. */
  | { kind: 'link'; at: string; uid: number }
  /** More links than Linux follows in one lookup, or a path changing under the walk. */
  | { kind: 'loop'; at: string };

export interface WalkOptions {
  /** Directories made where missing: none, those above the last name, or all. */
  make: 'none' | 'above' | 'all';
  /** Whether a link at the last name is followed (when root placed it) or is the entry. */
  followLast: boolean;
}

/** Walks paths from one held root; what it holds is let go of at `close`. */
export interface Walker {
  walk(path: string, options: WalkOptions): Reached;
  close(): void;
}

/**
 * Walks paths from `root` as systemd's chase() does: one name at a time, each looked up
 * in the held directory above it and each directory opened without following links. A
 * link only root could have placed is followed inside the root (an absolute target starts
 * again at the root, `..` never climbs above it); any other link ends the walk. Errors
 * other than these (permission denied, a name too long) are thrown as fs errors.
 *
 * The directories a walk went through are kept for the walker's later walks, so that the
 * paths of one survey, mostly in a few directories, cost a lookup each: only for as long
 * as nothing is changed, since what the walk trusted was decided on owner and mode.
 */
export function walker(root: HeldDirectory): Walker {
  const holds: HeldDirectory[] = [];
  /** The directories from the root down to each directory of an asked path, by its names. */
  const known = new Map<string, HeldDirectory[]>([['', [root]]]);

  const walk = (path: string, options: WalkOptions): Reached => {
    const asked = namesOf(path);
    let from = asked.length - 1;
    while (!known.has(asked.slice(0, from).join('/'))) from--;
    const held = [...(known.get(asked.slice(0, from).join('/')) as HeldDirectory[])];
    const todo = asked.slice(from).reverse();
    // The asked names are at the bottom of `todo`, beneath those of links being followed.
    let askedLeft = todo.length;
    let turns = 0;
    for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
      if (todo.length < askedLeft) askedLeft = todo.length;
      const here = held[held.length - 1] as HeldDirectory;
      if (name === '..') {
        if (held.length > 1) held.pop();
        continue;
      }
      const last = todo.length === 0;
      const at = posix.join(here.at, name);
      let stats = lstatIfThere(inside(here, name));
      if (!stats) {
        const make = options.make === 'all' || (options.make === 'above' && !last);
        if (!make && last) return { kind: 'absent', dir: here, name, at };
        if (!make) return { kind: 'missing', at, why: 'absent' };
        makeDirectory(inside(here, name));
        stats = lstatSync(inside(here, name));
      }
      if (stats.isSymbolicLink()) {
        if (last && !options.followLast) return { kind: 'entry', dir: here, name, stats, at };
        if (!placedByRoot(stats, here.stats)) return { kind: 'link', at, uid: stats.uid };
        if (++turns > MOST_LINKS) return { kind: 'loop', at };
        const target = readlinkSync(inside(here, name));
        if (target.startsWith('/')) held.length = 1;
        todo.push(...namesOf(target).reverse());
        continue;
      }
      if (last) return { kind: 'entry', dir: here, name, stats, at };
      if (!stats.isDirectory()) return { kind: 'missing', at, why: 'not a directory' };
      const below = holdChanging(here, name, at);
      if (!below) {
        // Swapped since it was looked at: looked at again, as many times as links are.
        if (++turns > MOST_LINKS) return { kind: 'loop', at };
        todo.push(name);
        continue;
      }
      holds.push(below);
      held.push(below);
      if (todo.length === askedLeft) {
        known.set(asked.slice(0, asked.length - askedLeft).join('/'), [...held]);
      }
    }
    // The path named the root, or ended in `..`: the directory the walk stands in.
    const here = held[held.length - 1] as HeldDirectory;
    return { kind: 'entry', dir: here, name: '.', stats: here.stats, at: here.at };
  };

  return {
    walk,
    close() {
      for (const dir of holds.splice(0)) release(dir);
      known.clear();
    },
  };
}

/** A path's names, in order. */
function namesOf(path: string): string[] {
  return path.split('/').filter((name) => name !== '' && name !== '.');
}

function lstatIfThere(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** mkdir, as `mkdir -p` makes each directory; one made meanwhile by another is looked at. */
function makeDirectory(path: string) {
  try {
    mkdirSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** The directory held, or undefined when what is there is no longer a directory. */
function holdChanging(dir: HeldDirectory, name: string, at: string): HeldDirectory | undefined {
  try {
    return holdBelow(dir, name, at);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOENT') return undefined;
    throw error;
  }
}
