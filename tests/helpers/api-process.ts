import { type ChildProcess, spawn } from 'node:child_process';
import { type Agent, request } from 'node:http';
import { connect } from 'node:net';
import { SAFETY_MS } from './safety.ts';
import { BERTH } from './world.ts';

/** The environment a user would have, less the CA bundle (slow to load) and any BERTH_STATE. */
function userEnv(): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...rest } = process.env;
  return rest;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A real `berth api` process, started by its binary. */
export interface ApiProcess {
  child: ChildProcess;
  /** Every line it has printed on standard output so far. */
  lines: string[];
  stderr(): string;
  /** The address from its first start line. */
  url: string;
  port: number;
  exited: Promise<Exit>;
  /**
   * Resolves once `ready()` holds, asked again at everything it prints and at its exit;
   * fails naming `what` if it does not hold within `SAFETY_MS`.
   */
  until(ready: () => boolean, what: string): Promise<void>;
  /** Ends it if it is still running: for cleanup after a test that failed half-way. */
  stop(): Promise<Exit>;
}

/** `env` is laid over the user's: a name given undefined is taken out. */
function spawnBerth(
  args: string[],
  env: Record<string, string | undefined> = {},
  launcher: readonly string[] = [],
) {
  const [program, ...before] = [...launcher, process.execPath];
  const child = spawn(program as string, [...before, BERTH, ...args], {
    env: { ...userEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    const complete = stdout.split('\n');
    stdout = complete.pop() ?? '';
    lines.push(...complete);
    for (const listener of listeners) listener();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<Exit>((done) => {
    child.once('exit', (code, signal) => {
      for (const listener of listeners) listener();
      done({ code, signal });
    });
  });
  return { child, lines, listeners, stderr: () => stderr, exited };
}

/**
 * Starts `berth api ARGS` and waits for its three start lines; rejects with what
 * it said if it ends, or falls silent for `SAFETY_MS`, before printing them.
 */
export async function startApi(
  args: string[],
  env?: Record<string, string | undefined>,
  launcher: readonly string[] = [],
): Promise<ApiProcess> {
  const started = spawnBerth(['api', ...args], env, launcher);
  const { child, lines, listeners, exited } = started;
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => check(true), SAFETY_MS);
    const check = (late = false) => {
      if (lines.length >= 3) {
        clearTimeout(timer);
        listeners.delete(check);
        ready();
      } else if (ended || late) {
        clearTimeout(timer);
        child.kill('SIGKILL');
        fail(new Error(`berth api did not start: ${lines.join('\n')}\n${started.stderr()}`));
      }
    };
    listeners.add(check);
  });
  const url = (lines[0] ?? '').replace(/^serving /, '');
  return {
    child,
    lines,
    stderr: started.stderr,
    url,
    port: Number(new URL(url).port),
    exited,
    until: (ready, what) =>
      new Promise((done, fail) => {
        const timer = setTimeout(() => check(true), SAFETY_MS);
        const check = (late = false) => {
          if (ready()) done();
          else if (late) fail(new Error(`${what}: not so after ${SAFETY_MS / 1000} s`));
          else return;
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      }),
    stop() {
      if (!ended) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** Runs `berth api ARGS` expecting it to end by itself; kills it after `timeoutMs`. */
export async function runApiExpectingEnd(args: string[], timeoutMs = 15_000) {
  const started = spawnBerth(['api', ...args]);
  const timer = setTimeout(() => started.child.kill('SIGKILL'), timeoutMs);
  const exit = await started.exited;
  clearTimeout(timer);
  return { ...exit, stdout: started.lines.join('\n'), stderr: started.stderr() };
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: Record<string, unknown> | undefined;
}

/** One HTTP/1.1 request over a real socket, through `agent` (keep-alive or not). */
export function httpAsk(
  url: string,
  options: {
    method?: string;
    path: string;
    body?: string | Uint8Array;
    /** A body sent in these pieces, chunked, with no length declared. */
    chunks?: string[];
    headers?: Record<string, string>;
    agent?: Agent;
  },
): Promise<HttpAnswer> {
  return new Promise((done, fail) => {
    const sent = request(
      new URL(options.path, url),
      {
        method: options.method ?? 'POST',
        // Node sends a GET's body unframed unless its length is given.
        headers:
          options.body === undefined
            ? options.headers
            : { 'Content-Length': String(Buffer.byteLength(options.body)), ...options.headers },
        agent: options.agent,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('error', fail);
        response.on('end', () =>
          done({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    sent.on('error', fail);
    for (const chunk of options.chunks ?? []) sent.write(chunk);
    sent.end(options.body);
  });
}

export interface Cut {
  /** Everything the server sent before it closed. */
  raw: string;
}

/**
 * Opens a connection and sends `first`, then `drip()` every `everyMs` until the server
 * closes the connection (or, against a hang, `SAFETY_MS` passes). `begun` resolves once
 * `first` has been handed to the connection.
 */
export function dripHeaders(
  port: number,
  first: string,
  drip: (n: number) => string,
  everyMs = 400,
): { begun: Promise<void>; cut: Promise<Cut> } {
  const socket = connect(port, '127.0.0.1');
  const begun = new Promise<void>((written) => socket.write(first, () => written()));
  const cut = new Promise<Cut>((done) => {
    let raw = '';
    let n = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(drip(n++));
    }, everyMs);
    const giveUp = setTimeout(() => socket.destroy(), SAFETY_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      raw += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      done({ raw });
    });
  });
  return { begun, cut };
}

/** An HTTP/1.1 answer as raw text, split into its status line, headers and body. */
export function parseRaw(raw: string) {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
