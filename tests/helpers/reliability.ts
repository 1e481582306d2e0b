/** What the reliability suite shares: raw sockets, child processes, an in-process server. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { fileDeps } from '../../src/cli/deps.ts';
import { routes } from '../../src/commands/table.ts';
import { createApp } from '../../src/http/app.ts';
import { listen } from '../../src/http/serve.ts';
import { SAFETY_MS } from './safety.ts';
import { acceptAs, BERTH, withWords } from './world.ts';

/** Longer runs for `npm run test:soak`; the normal suite keeps every file under a minute. */
export const SOAK = process.env.BERTH_SOAK === '1';

export const TEST_SERVER = resolve(import.meta.dirname, 'test-server.ts');
const REPO = resolve(import.meta.dirname, '../..');

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, as text. */
  raw: string;
}

/**
 * Sends bytes over a fresh loopback connection and reads one answer: until it is
 * whole, or the server closes (or, against a hang, `SAFETY_MS` passes). `status` is 0
 * when the server closed without one.
 * The client does not half-close: Node's server drops a request whose client did.
 */
export function rawExchange(
  port: number,
  request: string | Uint8Array,
  { head = false } = {},
): Promise<RawAnswer> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const give = setTimeout(() => socket.destroy(), SAFETY_MS);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (isWhole(Buffer.concat(chunks), head)) socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(give);
      done(parseAnswer(Buffer.concat(chunks).toString('utf8')));
    });
    socket.write(request);
  });
}

/** Skips interim (1xx) answers: what follows them is the answer. */
function finalAnswer(raw: Buffer): Buffer {
  let rest = raw;
  while (/^HTTP\/1\.[01] 1\d\d /.test(rest.subarray(0, 16).toString('latin1'))) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return rest;
    rest = rest.subarray(end + 4);
  }
  return rest;
}

function isWhole(raw: Buffer, head: boolean): boolean {
  const answer = finalAnswer(raw);
  const end = answer.indexOf('\r\n\r\n');
  if (end < 0) return false;
  if (head) return true;
  const top = answer.subarray(0, end).toString('latin1').toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(top);
  if (length) return answer.length - end - 4 >= Number(length[1]);
  if (/\r\ntransfer-encoding: *chunked/.test(top))
    return answer.subarray(-5).toString() === '0\r\n\r\n';
  return false;
}

/** Parses the final HTTP/1.1 answer in `raw` (Content-Length or chunked, or to the end). */
export function parseAnswer(whole: string): RawAnswer {
  const raw = finalAnswer(Buffer.from(whole)).toString('utf8');
  const head = raw.indexOf('\r\n\r\n');
  if (!raw.startsWith('HTTP/1.') || head < 0)
    return { status: 0, headers: {}, body: '', raw: whole };
  const lines = raw.slice(0, head).split('\r\n');
  const status = Number(lines[0]?.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(head + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let text = '';
    let rest = body;
    for (;;) {
      const end = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, end), 16);
      if (!(size > 0)) break;
      text += rest.slice(end + 2, end + 2 + size);
      rest = rest.slice(end + 2 + size + 2);
    }
    body = text;
  } else if (headers['content-length'] !== undefined) {
    body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString('utf8');
  }
  return { status, headers, body, raw: whole };
}

/** A POST of a JSON text over a fresh connection. */
export function post(port: number, path: string, json: string, extra = '') {
  const length = Buffer.byteLength(json);
  return rawExchange(
    port,
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n${extra}\r\n${json}`,
  );
}

/**
 * The Command API in this process, with the test authenticator, on a port of its own.
 * `reached(test)` resolves once a request `test` holds for has reached the app; `settled()`
 * once every request the app was handed has been answered by it (or has failed).
 */
export async function inProcessServer(state: string) {
  const app = createApp({
    routes: routes(),
    authenticator: acceptAs('tester'),
    ...fileDeps({ dir: state, createIfMissing: false }),
  });
  const handled = new Set<Promise<unknown>>();
  const arrived: Request[] = [];
  const arrivals = new Set<() => void>();
  // The Node adapter hands the app its request as env, where the access facts are noted.
  const fetch = (request: Request, env?: Parameters<typeof app.fetch>[1]) => {
    arrived.push(request);
    for (const listener of arrivals) listener();
    const answering = Promise.resolve(app.fetch(request, env));
    const tracked = answering.finally(() => handled.delete(tracked)).catch(() => undefined);
    handled.add(tracked);
    return answering;
  };
  const stop = new AbortController();
  const served = await listen(fetch, { hostname: '127.0.0.1', port: 0 }, stop.signal);
  return {
    port: Number(new URL(served.url).port),
    reached: (test: (request: Request) => boolean) =>
      new Promise<void>((done) => {
        const check = () => {
          if (!arrived.some(test)) return;
          arrivals.delete(check);
          done();
        };
        arrivals.add(check);
        check();
      }),
    settled: async () => {
      while (handled.size > 0) await Promise.all(handled);
    },
    close: async () => {
      stop.abort();
      await served.closed;
    },
  };
}

export interface Child {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns a process, keeping what it prints, with a promise of its end. */
export function start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...rest } = process.env;
  const child = spawn(command, args, {
    cwd: REPO,
    env: { ...rest, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('close', (code, signal) => done({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs the built berth binary as a child that the test may kill. */
export function startBerth(args: string[], env: NodeJS.ProcessEnv = {}) {
  return start(process.execPath, [BERTH, ...args], env);
}

/** Waits until a child prints `serving http://…`, and gives its port. */
export async function servingPort(server: Child): Promise<number> {
  const deadline = Date.now() + SAFETY_MS;
  for (;;) {
    const match = /serving http:\/\/127\.0\.0\.1:(\d+)/.exec(server.stdout());
    if (match) return Number(match[1]);
    if (server.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(
        `the server did not start: ${server.stdout()}${server.stderr()} (exit ${server.child.exitCode})`,
      );
    }
    await sleep(25);
  }
}

/** The test server (tests/helpers/test-server.ts) in a child process, over `state`. */
export async function startTestServer(state: string) {
  const server = start(process.execPath, ['--import', 'tsx', TEST_SERVER, state]);
  const port = await servingPort(server);
  return { ...server, port };
}

export function sleep(ms: number) {
  return new Promise((done) => setTimeout(done, ms));
}

/** A seeded PRNG (mulberry32): the same seed gives the same run. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (below: number) => Math.floor(next() * below),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

/** Every file in a directory tree, with its bytes, for before-and-after comparisons. */
export async function snapshot(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else files.set(full.slice(dir.length + 1), (await readFile(full)).toString('base64'));
    }
  };
  await walk(dir);
  return files;
}

/** Leftovers of an interrupted atomic write anywhere under a directory (each node's too). */
export async function temporaryFiles(dir: string) {
  return (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.tmp'));
}

/** Every journal of a state directory (each node's, and the directory's own), read line by line: every line must parse. */
export async function journalLines(state: string) {
  const nodes = await readdir(join(state, 'nodes')).catch(() => [] as string[]);
  const paths = [
    join(state, 'journal.jsonl'),
    ...nodes.map((node) => join(state, 'nodes', node, 'journal.jsonl')),
  ];
  const entries: Record<string, unknown>[] = [];
  for (const path of paths) {
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text !== '' && !text.endsWith('\n')) throw new Error(`${path} does not end a line`);
    text
      .split('\n')
      .filter((line) => line !== '')
      .forEach((line, index) => {
        try {
          entries.push(withWords(line));
        } catch {
          throw new Error(`${path} line ${index + 1} does not parse: ${line.slice(0, 200)}`);
        }
      });
  }
  return entries.sort((a, b) =>
    String(a.at) < String(b.at) ? -1 : String(a.at) > String(b.at) ? 1 : 0,
  );
}

/** A module with nothing on the machine, so that assign resolves and converge has little to do. */
export const PLAIN = { description: 'a module for the reliability suite' };
