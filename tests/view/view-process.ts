import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { BERTH } from '../helpers/world.ts';

/** A real `berth view` process, started by its binary on a free loopback port. */
export interface ViewProcess {
  /** The address it printed, token and all. */
  address: string;
  /** The printed address's origin: `http://v-….localhost:PORT`. */
  origin: string;
  /** Its Host: `v-….localhost:PORT`. */
  host: string;
  /** The loopback port it listens on. */
  port: number;
  token: string;
  stderr(): string;
  /**
   * A request to it as a browser of this machine makes one: to 127.0.0.1 at its port, its
   * Host the printed address's (Node resolves no `.localhost` name), unless given another.
   */
  fetch(path: string, init?: ViewRequest): Promise<Response>;
  /** Opens its printed address, spending its token, and answers the session cookie it sets (`name=value`). */
  cookie(): Promise<string>;
  /** Ends it with SIGTERM, as Ctrl-C would, and answers its exit code. */
  stop(): Promise<number | null>;
}

export interface ViewRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
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
      const match = /^(http:\/\/([^/\s]+))\/\?token=([\w-]+)$/m.exec(stdout);
      if (!match) return;
      const origin = match[1] as string;
      const host = match[2] as string;
      const token = match[3] as string;
      const port = Number(new URL(origin).port);
      const fetchView = (path: string, init: ViewRequest = {}) => viewFetch(port, host, path, init);
      resolve({
        address: match[0],
        origin,
        host,
        port,
        token,
        stderr: () => stderr,
        fetch: fetchView,
        cookie: async () => {
          const first = await fetchView(`/?token=${token}`);
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

/** One request to 127.0.0.1:`port` with the Host given (or `host`), answered as a Web Response. */
function viewFetch(port: number, host: string, path: string, init: ViewRequest): Promise<Response> {
  return new Promise((resolve, reject) => {
    const asked = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: { host, ...init.headers },
        signal: init.signal,
        agent: false,
      },
      (answer) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(answer.headers))
          for (const one of [value ?? []].flat()) headers.append(name, one);
        const empty = init.method === 'HEAD' || [204, 304].includes(answer.statusCode ?? 0);
        resolve(
          new Response(empty ? null : (Readable.toWeb(answer) as ReadableStream), {
            status: answer.statusCode,
            headers,
          }),
        );
      },
    );
    asked.on('error', reject);
    asked.end(init.body);
  });
}
