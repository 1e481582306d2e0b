import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { onServerCore } from './cores.ts';
import { BERTH, cleanEnv, ROOT } from './stats.ts';

export interface Running {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const TSX = ['--import', 'tsx'];

/** Starts a server script from scripts/bench/servers under tsx, and waits for its port. */
export function startScript(
  name: string,
  script: string,
  env: Record<string, string>,
): Promise<Running> {
  const node = onServerCore([...TSX, join(ROOT, 'scripts/bench/servers', script)]);
  const child = spawn(node.command, node.args, {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return waitFor(name, child, /^listening (\d+)$/m, (match) => `http://127.0.0.1:${match[1]}`);
}

/** Starts the built binary's `berth api` (or another build's: `binary`) on a free loopback port. */
export function startBerthApi(
  name: string,
  state: string,
  issuer: string,
  binary = BERTH,
): Promise<Running> {
  const node = onServerCore([
    binary,
    'api',
    '--state',
    state,
    '--listen',
    '127.0.0.1:0',
    '--issuer',
    issuer,
  ]);
  const child = spawn(node.command, node.args, {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr?.resume();
  return waitFor(name, child, /^serving (http:\/\/\S+)$/m, (match) => match[1] as string);
}

function waitFor(
  name: string,
  child: ChildProcess,
  ready: RegExp,
  url: (match: RegExpExecArray) => string,
): Promise<Running> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within 20 s: ${seen}`));
    }, 20_000);
    child.once('exit', (code) =>
      reject(new Error(`${name} ended (${code}) before serving: ${seen}`)),
    );
    child.stdout?.on('data', (chunk) => {
      seen += chunk;
      const match = ready.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      child.removeAllListeners('exit');
      resolve({
        name,
        url: url(match),
        pid: child.pid as number,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 7_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.stdin?.end();
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
