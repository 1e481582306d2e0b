import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { sweepLeftovers, writeFileAtomic } from '../stores/atomic-file.ts';
import type { Machine, PathFacts, RunResult } from './machine.ts';

/** How long a start or stop hook may run before berth stops it. */
const HOOK_TIMEOUT_MS = 10 * 60_000;
const KEPT_OUTPUT = 2_000;

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
      throw new Error(`${path} is not a path under ${top}`);
    }
    return full;
  };

  return {
    async reach() {
      const info = await stat(top).catch(() => undefined);
      if (!info) return `its root ${top} does not exist`;
      if (!info.isDirectory()) return `its root ${top} is not a directory`;
      return undefined;
    },
    async inspect(path): Promise<PathFacts> {
      const info = await stat(at(path)).catch(() => undefined);
      if (!info) return { kind: 'missing' };
      if (info.isFile())
        return {
          kind: 'file',
          size: info.size,
          mode: (info.mode & 0o777).toString(8).padStart(4, '0'),
        };
      if (info.isDirectory())
        return { kind: 'directory', empty: (await readdir(at(path))).length === 0 };
      return { kind: 'other' };
    },
    async read(path) {
      return readFile(at(path)).then(
        (data) => new Uint8Array(data),
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        },
      );
    },
    async write(path, data, mode) {
      const full = at(path);
      await mkdir(dirname(full), { recursive: true });
      // Acts that write to a machine hold berth's lock: a temporary file of this one is
      // a dead write's, and may hold a secret.
      await sweepLeftovers(dirname(full), [basename(full)]);
      // The temporary file is given `mode` before its rename: the file is never looser.
      await writeFileAtomic(full, data, mode);
    },
    async makeDirectory(path) {
      await mkdir(at(path), { recursive: true });
    },
    run(script, env, signal) {
      return runHook(script, top, { ...env, BERTH_ROOT: top }, signal);
    },
  };
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
  signal?: AbortSignal,
): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', script], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let stoppedBy = '';
    const stop = (why: string) => {
      stoppedBy = why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    };
    const onAbort = () => stop('berth');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const limit = setTimeout(
      () => stop(`the ${HOOK_TIMEOUT_MS / 60_000} minute limit`),
      HOOK_TIMEOUT_MS,
    );
    const finish = (result: RunResult) => {
      clearTimeout(limit);
      signal?.removeEventListener('abort', onAbort);
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
