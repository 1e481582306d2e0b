import { spawn } from 'node:child_process';
import { packageManager } from '../packages/managers.ts';
import type { Installed, PackageAsk, PackageFacts, PackagePin } from '../packages/packages.ts';
import { waitSeconds } from '../packages/packages.ts';
import { MachineError } from './machine.ts';

/** What a package manager's scripts find on PATH, whoever runs berth. */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The packages of a rooted machine: this machine's package manager when its root is `/`.
 * Another root is a directory of this machine, with no package manager of its own: berth
 * does not install into it (docs/decisions.md), and the survey says so.
 */
export function localPackages(root: string) {
  return {
    async survey(asks: readonly PackageAsk[]): Promise<PackageFacts> {
      if (root !== '/') return { manager: 'not-a-machine', root };
      const { code, output } = await sh(
        `LC_ALL=C; export LC_ALL\n${packageManager.surveyScript(asks)}`,
      );
      if (code !== 0)
        throw new MachineError(
          'failed',
          `the survey of packages failed (exit ${code}): ${output.trim().split('\n').at(-1)}`,
        );
      try {
        return packageManager.readSurvey(asks, output.split('\n'));
      } catch (error) {
        throw new MachineError('failed', (error as Error).message);
      }
    },
    async refresh(waitMs: number): Promise<Installed> {
      if (root !== '/')
        throw new MachineError(
          'failed',
          `${root} is a directory of this machine: it has no package lists of its own`,
        );
      return read(await sh(packageManager.refreshScript(waitSeconds(waitMs))));
    },
    async unhold(): Promise<Installed> {
      if (root !== '/')
        throw new MachineError(
          'failed',
          `${root} is a directory of this machine: berth holds no service starts there`,
        );
      return read(await sh(packageManager.unholdScript()));
    },
    async install(
      pins: readonly PackagePin[],
      waitMs: number,
      holdStarts: boolean,
    ): Promise<Installed> {
      if (root !== '/')
        throw new MachineError(
          'failed',
          `${root} is a directory of this machine: berth installs no packages into it`,
        );
      return read(await sh(packageManager.installScript(pins, waitSeconds(waitMs), holdStarts)));
    },
  };
}

/** A package manager's answer, read; one that ended before the manager did, in words. */
function read({ code, output }: { code: number; output: string }): Installed {
  const installed = packageManager.readInstall(output);
  if (installed) return installed;
  const last = output.trim().split('\n').at(-1);
  throw new MachineError(
    'failed',
    `apt was stopped before it ended (exit ${code}${last ? `: ${last}` : ''})`,
  );
}

/**
 * Runs a script with sh, its output and errors in one text. Not stopped when berth is
 * told to stop: a package manager cut half-way leaves its database to be mended. In a
 * session of its own, so that a Ctrl-C at berth's terminal reaches berth alone.
 */
function sh(script: string): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', script], {
      cwd: '/',
      detached: true,
      env: { PATH, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => done({ code: 127, output: error.message }));
    child.on('close', (code) =>
      done({ code: code ?? 128, output: Buffer.concat(chunks).toString('utf8') }),
    );
  });
}
