import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { writeFileAtomic } from '../stores/atomic-file.ts';
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
      await writeFileAtomic(full, data, mode);
      await chmod(full, mode);
    },
    async makeDirectory(path) {
      await mkdir(at(path), { recursive: true });
    },
    run(script, env) {
      return runHook(script, top, { ...env, BERTH_ROOT: top });
    },
  };
}

function runHook(script: string, cwd: string, env: Record<string, string>): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', script], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: HOOK_TIMEOUT_MS,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => done({ code: 127, output: error.message }));
    child.on('close', (code, signal) =>
      done({
        code: code ?? 128,
        output: signal ? `${output}\nstopped by ${signal}`.trim() : output.trim(),
      }),
    );
  });
}
