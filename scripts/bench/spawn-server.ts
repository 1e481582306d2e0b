import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onServerCore } from './cores.ts';
import { BERTH, cleanEnv, ROOT } from './stats.ts';

export interface Running {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const TSX = ['--import', 'tsx'];

/**
 * Starts a server script from scripts/bench/servers under tsx, and waits for its port. Its
 * standard error (the baselines' access log) goes to a file, as berth api's does.
 */
export function startScript(
  name: string,
  script: string,
  env: Record<string, string>,
): Promise<Running> {
  const node = onServerCore([...TSX, join(ROOT, 'scripts/bench/servers', script)]);
  const stderr = stderrFile();
  const child = spawn(node.command, node.args, {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['pipe', 'pipe', stderr.fd],
  });
  stderr.handedTo(child);
  return waitFor(
    name,
    child,
    /^listening (\d+)$/m,
    (match) => `http://127.0.0.1:${match[1]}`,
    stderr.said,
  );
}

export interface BerthApiOptions {
  /** Another build's binary, for before-and-after runs; the default is this build's. */
  binary?: string;
  /** Laid over a user's environment (`$BERTH_STORE`, `$XDG_RUNTIME_DIR`, …). */
  env?: Record<string, string>;
  /** On the server's core (the default, for the HTTP section), or wherever the system puts it. */
  pinned?: boolean;
}

/** Starts the built binary's `berth api` on a free loopback port, its standard error to a file. */
export function startBerthApi(
  name: string,
  state: string,
  issuer: string,
  options: BerthApiOptions = {},
): Promise<Running> {
  const { binary = BERTH, env = {}, pinned = true } = options;
  const args = [binary, 'api', '--state', state, '--listen', '127.0.0.1:0', '--issuer', issuer];
  const node = pinned ? onServerCore(args) : { command: process.execPath, args };
  const stderr = stderrFile();
  const child = spawn(node.command, node.args, {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['pipe', 'pipe', stderr.fd],
  });
  stderr.handedTo(child);
  return waitFor(
    name,
    child,
    /^serving (http:\/\/\S+)$/m,
    (match) => match[1] as string,
    stderr.said,
  );
}

/**
 * A file for a server's standard error (its access log, a line a request), as journald
 * would take it: the bench's own process, where the load generator may run, does not read
 * it. Removed when the server ends; `said` is its last words, for a server that ends
 * before serving.
 */
function stderrFile() {
  const path = join(mkdtempSync(join(tmpdir(), 'berth-bench-server-')), 'stderr');
  const fd = openSync(path, 'w');
  return {
    fd,
    handedTo(child: ChildProcess) {
      closeSync(fd);
      child.once('exit', () => rmSync(dirname(path), { recursive: true, force: true }));
    },
    said() {
      try {
        return readFileSync(path, 'utf8').slice(-2000);
      } catch {
        return '';
      }
    },
  };
}

function waitFor(
  name: string,
  child: ChildProcess,
  ready: RegExp,
  url: (match: RegExpExecArray) => string,
  said: () => string = () => '',
): Promise<Running> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within 20 s: ${seen}${said()}`));
    }, 20_000);
    const endedEarly = (code: number | null) =>
      reject(new Error(`${name} ended (${code}) before serving: ${seen}${said()}`));
    child.once('exit', endedEarly);
    child.stdout?.on('data', (chunk) => {
      seen += chunk;
      const match = ready.exec(seen);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      // Its own listener only: the one that removes the server's log stays.
      child.off('exit', endedEarly);
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
