import { spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  type Stats,
} from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import {
  type HeldDirectory,
  holdBelow,
  holdRoot,
  inside,
  release,
  reopen,
} from '../fs/held-directory.ts';
import { sweepLeftoversIn, writeFileIn } from '../fs/write-in-directory.ts';
import { HOOK_PATH, PATH_MAX, READ_LIMIT } from './limits.ts';
import { localFacts, treeFacts } from './local-facts.ts';
import { localPackages } from './local-packages.ts';
import {
  type AccountNames,
  type Accounts,
  type Change,
  linkWords,
  type Machine,
  MachineError,
  type PathFacts,
  RAW_OUTPUT_KEPT,
  type RunOptions,
  type RunResult,
  STOP_GRACE_MS,
  type StoppedBy,
  type SurveyPath,
  stoppedLine,
  whenToStop,
} from './machine.ts';
import { onlyRootWrites, type Reached, type Walker, walker } from './safe-walk.ts';

/**
 * This machine, with every machine path taken under `root` (`/` is the machine itself;
 * another root is how tests and trials stand machines up). Every path is walked from the
 * held root a name at a time (machines/safe-walk.ts): a link another user could have placed is
 * never followed, and a link root placed never leads out of the root.
 */
export function rootedMachine(root: string): Machine {
  const top = resolve(root);
  /** The machine path as asked, or why it is not one of this machine's. */
  const checked = (path: string) => {
    const names = path.split('/');
    if (!path.startsWith('/') || names.includes('..')) {
      throw new MachineError('failed', `${path} is not a path under ${top}`);
    }
    return path;
  };
  /** Holds the root for one survey or batch; a root that is not there is unreachable. */
  const reach = (): HeldDirectory => {
    let held: HeldDirectory;
    try {
      held = holdRoot(top);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        throw new MachineError('unreachable', `its root ${top} does not exist`);
      if (code === 'ENOTDIR') {
        throw new MachineError('unreachable', `its root ${top} is not a directory`);
      }
      throw new MachineError('unreachable', `its root ${top} cannot be opened: ${wordsOf(error)}`);
    }
    return held;
  };

  const packages = localPackages(top);
  return {
    async survey(paths, names, asks, { facts: withFacts = false } = {}) {
      const held = reach();
      const walking = walker(held);
      // This machine's facts, asked at once: the sh runs while the paths are walked.
      const here = withFacts ? localFacts() : undefined;
      try {
        const facts = new Map<string, PathFacts>();
        for (const asked of paths)
          facts.set(asked.path, surveyOne(walking, checked(asked.path), asked));
        const links = [...facts.values()].filter((fact) => fact.kind === 'link');
        if (links.length > 0) {
          const owners = usersOf(walking);
          for (const link of links) {
            const owner = owners.get(link.uid);
            if (owner !== undefined) link.owner = owner;
          }
        }
        const survey = names
          ? Object.assign(facts, { accounts: accountsUnder(walking, names) })
          : facts;
        if (here) {
          const told =
            top === '/' ? await here : treeFacts((path) => textUnder(walking, path), await here);
          Object.assign(survey, { facts: told });
        }
        if (!asks || asks.length === 0) return survey;
        return Object.assign(survey, { packages: await packages.survey(asks) });
      } finally {
        walking.close();
        release(held);
      }
    },
    async refreshPackages({ waitMs }) {
      release(reach());
      return packages.refresh(waitMs);
    },
    async install(pins, { waitMs, holdStarts }) {
      release(reach());
      return packages.install(pins, waitMs, holdStarts);
    },
    async unholdStarts() {
      release(reach());
      return packages.unhold();
    },
    async apply(changes) {
      // One change after another, as the ssh machine's batch does them in one script.
      let held: HeldDirectory | undefined;
      let walking: Walker | undefined;
      try {
        for (const [done, change] of changes.entries()) {
          try {
            checked(change.path);
            held ??= reach();
            walking ??= walker(held);
            await make(walking, change);
            if (change.kind === 'directory') {
              // Its owner and mode decide which links in it are followed: looked at anew.
              walking.close();
              walking = undefined;
            }
          } catch (error) {
            if (!(error instanceof MachineError)) throw error;
            return { done, failure: error };
          }
        }
        return { done: changes.length };
      } finally {
        walking?.close();
        if (held) release(held);
      }
    },
    async run(script, env, options) {
      release(reach());
      return runHook(script, top, { ...env, BERTH_ROOT: top }, options);
    },
    close: async () => {},
  };
}

/** One change, walked from the held root; a link in the way refuses it in words. */
async function make(walking: Walker, change: Change) {
  if (change.kind === 'file') {
    const what = `write ${change.path}`;
    // The file's own name is never followed: the rename replaces whatever is there.
    const reached = await failAs(what, () =>
      walking.walk(change.path, { make: 'above', followLast: false }),
    );
    const { dir, name } = reachedOrRefused(walking, change.path, reached, what);
    await failAs(what, async () => {
      // Acts that write to a machine hold the node's lock: a temporary file of this one
      // is a dead write's, and may hold a secret.
      sweepLeftoversIn(dir, [name]);
      await writeFileIn(dir, name, change.data, change.options);
    });
    return;
  }
  const what = `create ${change.path}`;
  const reached = await failAs(what, () =>
    walking.walk(change.path, { make: 'all', followLast: true }),
  );
  const { dir, name, stats, at } = reachedOrRefused(walking, change.path, reached, what);
  if (!stats?.isDirectory())
    throw new MachineError('failed', `${what} failed: ${at} is not a directory`);
  const { uid, gid, mode } = change.options ?? {};
  if (uid === undefined && gid === undefined && mode === undefined) return;
  await failAs(what, () => {
    // On the directory opened, never on its path looked up again.
    const held = holdBelow(dir, name, at);
    try {
      const fd = reopen(held);
      try {
        if (uid !== undefined || gid !== undefined) fchownSync(fd, uid ?? -1, gid ?? -1);
        if (mode !== undefined) fchmodSync(fd, mode);
      } finally {
        closeSync(fd);
      }
    } finally {
      release(held);
    }
  });
}

/**
 * Where a change's walk ended: the directory and name to act on, or the change refused, in
 * linkWords where a link another user placed is in the way.
 */
function reachedOrRefused(walking: Walker, path: string, reached: Reached, what: string) {
  switch (reached.kind) {
    case 'link': {
      const owner = usersOf(walking).get(reached.uid);
      throw new MachineError('denied', linkWords(path, { ...reached, owner }));
    }
    case 'loop':
      throw new MachineError(
        'failed',
        `${what} failed: ${reached.at}: too many levels of symbolic links`,
      );
    case 'missing':
      throw new MachineError('failed', `${what} failed: ${reached.at} is not a directory`);
    case 'absent':
      return { ...reached, stats: undefined };
    case 'entry':
      return reached;
  }
}

/** What one path is, found by a walk that follows only links root placed. */
function surveyOne(walking: Walker, path: string, asked: SurveyPath): PathFacts {
  if (Buffer.byteLength(path) >= PATH_MAX) return { kind: 'unreadable', reason: 'name too long' };
  let reached: Reached;
  try {
    reached = walking.walk(path, { make: 'none', followLast: true });
  } catch (error) {
    return { kind: 'unreadable', reason: wordsOf(error) };
  }
  switch (reached.kind) {
    case 'missing':
    case 'absent':
      return { kind: 'missing' };
    case 'link':
      return { kind: 'link', at: reached.at, uid: reached.uid };
    case 'loop':
      return { kind: 'unreadable', reason: 'too many levels of symbolic links' };
  }
  try {
    return entryFacts(reached.dir, reached.name, reached.stats, reached.at, asked.read ?? false);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'unreadable', reason: wordsOf(error) };
  }
}

/** The facts of what a walk found, its bytes read from what was opened without following. */
function entryFacts(
  dir: HeldDirectory,
  name: string,
  stats: Stats,
  at: string,
  read: boolean,
): PathFacts {
  if (stats.isDirectory()) {
    const held = holdBelow(dir, name, at);
    try {
      const empty = readdirSync(inside(held, '.')).length === 0;
      return { kind: 'directory', empty, ...ownership(held.stats) };
    } finally {
      release(held);
    }
  }
  if (!stats.isFile()) return { kind: 'other' };
  // A second name of a file, in a directory another user may write, may be theirs to make.
  if (stats.nlink > 1 && !onlyRootWrites(dir.stats)) {
    return { kind: 'link', at, uid: stats.uid, hard: true };
  }
  const file = { kind: 'file' as const, size: stats.size, ...ownership(stats) };
  if (!read || stats.size > READ_LIMIT) return file;
  const fd = openSync(
    inside(dir, name),
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY,
  );
  try {
    const opened = fstatSync(fd);
    if (opened.ino !== stats.ino || opened.dev !== stats.dev) {
      return { kind: 'unreadable', reason: 'it changed while berth looked at it' };
    }
    const bytes = readUpTo(fd, opened.size, READ_LIMIT);
    if (!bytes) return { ...file, size: opened.size };
    return { ...file, size: bytes.length, bytes };
  } finally {
    closeSync(fd);
  }
}

function ownership(stats: Stats) {
  return {
    mode: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
    uid: stats.uid,
    gid: stats.gid,
  };
}

/**
 * The whole file, or undefined when it is longer than `limit` (it grew since its stat). The
 * buffer starts at the size fstat gave, one byte over to see the end, and grows if it must.
 */
function readUpTo(fd: number, size: number, limit: number): Uint8Array | undefined {
  let buffer = new Uint8Array(Math.min(size, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      const larger = new Uint8Array(Math.min(buffer.length * 2, limit + 1));
      larger.set(buffer);
      buffer = larger;
    }
    const got = readSync(fd, buffer, length, buffer.length - length, null);
    if (got === 0) break;
    length += got;
  }
  return length > limit ? undefined : buffer.subarray(0, length);
}

/** A small file of the root's, read through the safe walk: undefined when it is not one berth reads. */
function textUnder(walking: Walker, path: string): string | undefined {
  const facts = surveyOne(walking, path, { path, read: true });
  return facts.kind === 'file' && facts.bytes ? new TextDecoder().decode(facts.bytes) : undefined;
}

/** One of the root's own account tables, read through the safe walk ('' where missing). */
function tableUnder(walking: Walker, file: 'passwd' | 'group'): string {
  const facts = surveyOne(walking, `/etc/${file}`, { path: `/etc/${file}`, read: true });
  if (facts.kind === 'missing') return '';
  if (facts.kind === 'file' && facts.bytes) return new TextDecoder().decode(facts.bytes);
  const why =
    facts.kind === 'unreadable'
      ? facts.reason
      : facts.kind === 'link'
        ? linkWords(`/etc/${file}`, facts)
        : 'it is not a file berth reads';
  throw new MachineError('denied', `/etc/${file} cannot be read: ${why}`);
}

/** Each line's name and id of an account table, the first line of a name counting. */
function entriesOf(text: string): [string, number][] {
  const entries: [string, number][] = [];
  for (const line of text.split('\n')) {
    const [name, , id] = line.split(':');
    if (name && /^[0-9]+$/.test(id ?? '')) entries.push([name, Number(id)]);
  }
  return entries;
}

/**
 * The names of the root's users by id, for a link's owner (the first name of an id
 * counts); none when its /etc/passwd cannot be read, and the words name the uid.
 */
function usersOf(walking: Walker): Map<number, string> {
  const names = new Map<number, string>();
  let table = '';
  try {
    table = tableUnder(walking, 'passwd');
  } catch (error) {
    if (!(error instanceof MachineError)) throw error;
  }
  for (const [name, id] of entriesOf(table)) if (!names.has(id)) names.set(id, name);
  return names;
}

/**
 * The names asked for, as the root's own `/etc/passwd` and `/etc/group` give them: the
 * machine under a root is the one whose accounts count (a missing file holds no names).
 */
function accountsUnder(walking: Walker, names: AccountNames): Accounts {
  const table = (file: 'passwd' | 'group', wanted: readonly string[]) => {
    const ids = new Map<string, number>();
    if (wanted.length === 0) return ids;
    for (const [name, id] of entriesOf(tableUnder(walking, file))) {
      if (wanted.includes(name) && !ids.has(name)) ids.set(name, id);
    }
    return ids;
  };
  return {
    users: table('passwd', names.users),
    groups: table('group', names.groups),
    actor: { uid: process.geteuid?.() ?? 0, gid: process.getegid?.() ?? 0 },
  };
}

/** An fs error in words, without the /proc path it was made through. */
function wordsOf(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENAMETOOLONG':
      return 'name too long';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'ENOTDIR':
      return 'not a directory';
    case 'EISDIR':
      return 'a directory is there';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EROFS':
      return 'a read-only file system';
    case 'ENOENT':
      return 'it is no longer there';
    default:
      return (error as Error).message;
  }
}

async function failAs<T>(what: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MachineError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new MachineError(
      code === 'EACCES' || code === 'EPERM' ? 'denied' : 'failed',
      `${what} failed: ${wordsOf(error)}`,
    );
  }
}

/**
 * Runs a hook in a process group of its own, so that stopping it (at its deadline,
 * or through `signal`) stops what it started too. The hook is done when its shell
 * exits: a daemon it leaves running in the background may keep its output open.
 */
function runHook(
  script: string,
  cwd: string,
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', script], {
      cwd,
      env: hookEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output = (output + text).slice(-RAW_OUTPUT_KEPT);
      options.output?.(text);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let stoppedBy: StoppedBy | undefined;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const stop = (why: StoppedBy) => {
      if (stoppedBy) return;
      stoppedBy = why;
      signalGroup('SIGTERM');
      // Whatever of the group ignores SIGTERM, even once the hook's shell is gone.
      setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS).unref();
    };
    const letGo = whenToStop(options, stop);
    const finish = (result: RunResult) => {
      letGo();
      child.stdout.destroy();
      child.stderr.destroy();
      done(result);
    };
    child.on('error', (error) => finish({ code: 127, output: error.message }));
    child.on('exit', (code, killedBy) => {
      // A hook whose shell outlived SIGTERM by exiting on its own was still stopped by berth.
      const said = stoppedBy ? stoppedLine(stoppedBy, options.deadlineMs) : killedBy;
      const result = (): RunResult => ({
        code: code ?? 128,
        output: said ? `${output.trimEnd()}\n${said}`.trim() : output.trim(),
        ...(stoppedBy ? { stopped: stoppedBy } : {}),
      });
      // Let the last output arrive, but do not wait on a background process that holds it.
      const late = setTimeout(() => finish(result()), 100);
      child.on('close', () => {
        clearTimeout(late);
        finish(result());
      });
    });
  });
}

/**
 * A hook's whole environment: the system's PATH, berth's LANG (else C.UTF-8), the HOME of
 * the user it runs as, and what berth gives it. Never berth's own environment: a daemon a
 * hook starts keeps it in /proc/PID/environ for its user to read (PGPASSWORD, BERTH_STORE).
 */
function hookEnvironment(env: Record<string, string>): Record<string, string> {
  return {
    PATH: HOOK_PATH,
    LANG: process.env.LANG || 'C.UTF-8',
    HOME: userInfo().homedir,
    ...env,
  };
}
