import { spawn } from 'node:child_process';
import { BERTH } from '../helpers/world.ts';

/** A real `berth view` process, started by its binary on a free loopback port. */
export interface ViewProcess {
  /** The address it printed, token and all. */
  address: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  token: string;
  stderr(): string;
  /** Opens its address as a browser would, and answers the cookie it sets (`name=value`). */
  cookie(): Promise<string>;
  /** Ends it with SIGTERM, as Ctrl-C would, and answers its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `berth view --listen 127.0.0.1:0 --state STATE` and waits for the address it prints. */
export function startView(state: string, args: string[] = []): Promise<ViewProcess> {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [BERTH, '--state', state, 'view', '--listen', '127.0.0.1:0', ...args],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^(http:\/\/127\.0\.0\.1:\d+)\/\?token=([\w-]+)$/m.exec(stdout);
      if (!match) return;
      const origin = match[1] as string;
      const token = match[2] as string;
      resolve({
        address: match[0],
        origin,
        token,
        stderr: () => stderr,
        cookie: async () => {
          const first = await fetch(`${origin}/?token=${token}`, { redirect: 'manual' });
          return (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
        },
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    });
    exited.then((code) =>
      reject(
        new Error(`berth view ended (${code}) before printing its address:\n${stdout}${stderr}`),
      ),
    );
  });
}
