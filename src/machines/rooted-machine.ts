import { spawn } from 'node:child_process';
import { chmod, chown, type lstat, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { sweepLeftovers, writeFileAtomic } from '../fs/atomic-file.ts';
import {
  type AccountNames,
  type Accounts,
  type Change,
  KEPT_OUTPUT,
  type Machine,
  MachineError,
  type PathFacts,
  READ_LIMIT,
  type RunOptions,
  type RunResult,
  STOP_GRACE_MS,
  type SurveyPath,
  whenToStop,
} from './machine.ts';

/**
 * This machine, with every machine path taken under `root` (`/` is the machine
 * itself; another root is how tests and trials stand machines up).
 */
export function rootedMachine(root: string): Machine {
  const top = resolve(root);
  const at = (path: string) => {
    const full = join(top, path);
    const inside = relative(top, full);
    if (inside.startsWith('..') || resolve(top, inside) !== full) {
      throw new MachineError('failed', `${path} is not a path under ${top}`);
    }
    return full;
  };
  const reach = async () => {
    const info = await stat(top).catch(() => undefined);
    if (!info) throw new MachineError('unreachable', `its root ${top} does not exist`);
    if (!info.isDirectory())
      throw new MachineError('unreachable', `its root ${top} is not a directory`);
  };

  const make = async (change: Change) => {
    const full = at(change.path);
    await reach();
    if (change.kind === 'file') {
      await failAs(`write ${change.path}`, async () => {
        await mkdir(dirname(full), { recursive: true });
        // Acts that write to a machine hold the node's lock: a temporary file of this one
        // is a dead write's, and may hold a secret.
        await sweepLeftovers(dirname(full), [basename(full)]);
        await writeFileAtomic(full, change.data, change.options);
      });
      return;
    }
    const { uid, gid, mode } = change.options ?? {};
    await failAs(`create ${change.path}`, async () => {
      await mkdir(full, { recursive: true });
      if (uid !== undefined || gid !== undefined) await chown(full, uid ?? -1, gid ?? -1);
      if (mode !== undefined) await chmod(full, mode);
    });
  };

  return {
    async survey(paths, names) {
      await reach();
      const facts = new Map<string, PathFacts>();
      await Promise.all(
        paths.map(async (asked) => facts.set(asked.path, await pathFacts(at(asked.path), asked))),
      );
      if (!names) return facts;
      return Object.assign(facts, { accounts: await accountsUnder(top, names) });
    },
    async apply(changes) {
      // One change after another, as the ssh machine's batch does them in one script.
      for (const [done, change] of changes.entries()) {
        try {
          await make(change);
        } catch (error) {
          if (!(error instanceof MachineError)) throw error;
          return { done, failure: error };
        }
      }
      return { done: changes.length };
    },
    async run(script, env, options) {
      await reach();
      return runHook(script, top, { ...env, BERTH_ROOT: top }, options);
    },
    close: async () => {},
  };
}

/**
 * The names asked for, as the root's own `/etc/passwd` and `/etc/group` give them: the
 * machine under a root is the one whose accounts count (a missing file holds no names).
 */
async function accountsUnder(top: string, names: AccountNames): Promise<Accounts> {
  const table = async (file: string, wanted: readonly string[]) => {
    const ids = new Map<string, number>();
    if (wanted.length === 0) return ids;
    const text = await readFile(join(top, 'etc', file), 'utf8').catch((error) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw new MachineError('denied', `/etc/${file} cannot be read: ${reasonOf(error)}`);
    });
    for (const line of text.split('\n')) {
      const [name, , id] = line.split(':');
      if (name && wanted.includes(name) && !ids.has(name) && /^[0-9]+$/.test(id ?? ''))
        ids.set(name, Number(id));
    }
    return ids;
  };
  return { users: await table('passwd', names.users), groups: await table('group', names.groups) };
}

async function pathFacts(full: string, asked: SurveyPath): Promise<PathFacts> {
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = await stat(full);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'unreadable', reason: reasonOf(error) };
  }
  const mode = (info.mode & 0o7777).toString(8).padStart(4, '0');
  if (info.isDirectory()) {
    const names = await readdir(full).catch(() => undefined);
    if (!names) return { kind: 'unreadable', reason: 'permission denied' };
    return { kind: 'directory', empty: names.length === 0, mode, uid: info.uid, gid: info.gid };
  }
  if (!info.isFile()) return { kind: 'other' };
  const file = { kind: 'file' as const, size: info.size, mode, uid: info.uid, gid: info.gid };
  if (!asked.read || info.size > READ_LIMIT) return file;
  try {
    return { ...file, bytes: new Uint8Array(await readFile(full)) };
  } catch (error) {
    return { kind: 'unreadable', reason: reasonOf(error) };
  }
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
}

async function failAs(what: string, work: () => Promise<unknown>) {
  try {
    await work();
  } catch (error) {
    if (error instanceof MachineError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new MachineError(
      code === 'EACCES' || code === 'EPERM' ? 'denied' : 'failed',
      `${what} failed: ${reasonOf(error)}`,
    );
  }
}

/**
 * Runs a hook in a process group of its own, so that stopping it (at the time limit,
 * or through `signal`) stops what it started too. The hook is done when its shell
 * exits: a daemon it leaves running in the background may keep its output open.
 */
function runHook(
  script: string,
  cwd: string,
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<RunResult> {
  const { signal } = options;
  return new Promise((done) => {
    const child = spawn('sh', ['-c', script], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output = (output + text).slice(-KEPT_OUTPUT);
      options.output?.(text);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let stoppedBy = '';
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const stop = (why: string) => {
      stoppedBy = why;
      signalGroup('SIGTERM');
      // Whatever of the group ignores SIGTERM, even once the hook's shell is gone.
      setTimeout(() => signalGroup('SIGKILL'), STOP_GRACE_MS).unref();
    };
    const letGo = whenToStop(signal, stop);
    const finish = (result: RunResult) => {
      letGo();
      child.stdout.destroy();
      child.stderr.destroy();
      done(result);
    };
    child.on('error', (error) => finish({ code: 127, output: error.message }));
    child.on('exit', (code, killedBy) => {
      const result = () => ({
        code: code ?? 128,
        output: killedBy ? `${output}\nstopped by ${stoppedBy || killedBy}`.trim() : output.trim(),
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
