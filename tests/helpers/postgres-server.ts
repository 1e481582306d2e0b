/**
 * A PostgreSQL server of the test's own: initdb into a temporary directory, listening on
 * 127.0.0.1 alone at a free port, its socket in that directory, trust on loopback. The
 * stores under test connect as `berth`, a role that owns its databases and nothing more.
 * PostgreSQL refuses to run as root, so under root the server runs as the `postgres`
 * system user that Debian's package makes.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { needs } from './needs.ts';
import { until } from './safety.ts';

export interface PostgresServer {
  /** A database of its own, owned by `berth`: `postgresql://berth@127.0.0.1:PORT/NAME`. */
  url: string;
  host: string;
  port: number;
  /** Another new, empty database on this server; its URL. */
  createDatabase(): Promise<string>;
  /** Runs SQL as the superuser in the database of `url` (the server's first by default). */
  admin(sql: string, params?: unknown[], url?: string): Promise<pg.QueryResult>;
  /** Puts a line first in pg_hba.conf and reloads: `host all alice 127.0.0.1/32 scram-sha-256`. */
  hba(line: string): Promise<void>;
  /** Stops the server and removes its directory; safe to call twice. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** A fast shutdown: every session is ended, as when a database goes away mid-act. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
}

/** Why no server can be started here, or undefined when one can. */
export function postgresUnavailable(): string | undefined {
  const bin = binDir();
  if (!bin)
    return 'needs initdb and postgres (/usr/lib/postgresql/*/bin): apt-get install postgresql, or set BERTH_TEST_PG_BIN';
  if (process.getuid?.() === 0) {
    if (runAs() === undefined)
      return 'needs the `postgres` user to run PostgreSQL as, not root: apt-get install postgresql';
    const setpriv = needs('setpriv', 'util-linux');
    if (setpriv) return `${setpriv} (to run PostgreSQL as \`postgres\`, not root)`;
  }
  return undefined;
}

/** The directory of initdb and postgres: $BERTH_TEST_PG_BIN, else Debian's newest. */
export function binDir(): string | undefined {
  const named = process.env.BERTH_TEST_PG_BIN;
  if (named) return existsSync(join(named, 'postgres')) ? named : undefined;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The uid and gid of `postgres`, when there is one. */
function runAs(): { uid: number; gid: number } | undefined {
  const passwd = existsSync('/etc/passwd') ? readFileSync('/etc/passwd', 'utf8') : '';
  const line = passwd.split('\n').find((item) => item.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return uid && gid ? { uid: Number(uid), gid: Number(gid) } : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startPostgres(): Promise<PostgresServer> {
  const reason = postgresUnavailable();
  if (reason) throw new Error(reason);
  const bin = binDir() as string;
  const user = process.getuid?.() === 0 ? runAs() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'berth-pg-'));
  const data = join(dir, 'data');
  const socket = join(dir, 'socket');
  let child: ChildProcess | undefined;
  let stopped = false;

  /** The command as the server's user: setpriv execs it in place, so a pid is the server's. */
  const as = (command: string, args: string[]): [string, string[]] =>
    user
      ? [
          '/usr/bin/setpriv',
          [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', '--', command, ...args],
        ]
      : [command, args];

  // Whatever happens to the test process, its server does not outlive it.
  const onExit = () => {
    if (child?.pid && child.exitCode === null) {
      try {
        process.kill(child.pid, 'SIGQUIT');
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // A test runner ends a file that ran out of time with a signal, and 'exit' does not
  // come then: the server is stopped, and the signal taken as it would have been.
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    forget();
    process.kill(process.pid, signal);
  };
  const forget = () => {
    process.off('exit', onExit);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  process.on('exit', onExit);
  for (const signal of SIGNALS) process.once(signal, onSignal);

  try {
    execFileSync('mkdir', ['-p', socket]);
    chmodSync(dir, 0o700);
    if (user) for (const path of [dir, socket]) chownSync(path, user.uid, user.gid);
    const [initdb, initArgs] = as(join(bin, 'initdb'), [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    execFileSync(initdb, initArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    onExit();
    forget();
    throw new Error(`initdb failed: ${(error as Error).message}`);
  }

  const port = await freePort();
  const host = '127.0.0.1';
  const superuser = (database: string) => `postgresql://postgres@${host}:${port}/${database}`;

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  /** Starts the server on its port again; a server already running is left as it is. */
  async function startServer() {
    if (running()) return;
    const [command, args] = as(join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      socket,
      '-c',
      `listen_addresses=${host}`,
      '-c',
      'max_connections=200',
      '-c',
      `logging_collector=off`,
    ]);
    const started = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    started.stderr?.on('data', (chunk: Buffer) => {
      said = (said + chunk.toString()).slice(-4000);
    });
    child = started;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (started.exitCode !== null)
        throw new Error(`postgres exited (${started.exitCode}) while starting: ${said}`);
      const client = new pg.Client({ connectionString: superuser('postgres') });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => {});
      }
      if (Date.now() > deadline) throw new Error(`postgres did not start within 30s: ${said}`);
      await sleep(50);
    }
  }

  async function stopServer() {
    const server = child;
    if (!server || !running()) return;
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    server.kill('SIGINT'); // fast shutdown: sessions are ended, the data is kept
    const late = setTimeout(() => server.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(late);
  }

  async function admin(sql: string, params: unknown[] = [], url = superuser('postgres')) {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    try {
      return await client.query(sql, params);
    } finally {
      await client.end();
    }
  }

  let databases = 0;
  async function createDatabase() {
    const name = `berth_test_${++databases}`;
    // The name is made here from a counter, never taken from a test's input.
    await admin(`CREATE DATABASE ${name} OWNER berth`);
    return `postgresql://berth@${host}:${port}/${name}`;
  }

  async function stop() {
    if (stopped) return;
    stopped = true;
    try {
      await stopServer();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      forget();
    }
  }

  try {
    await startServer();
    await admin('CREATE ROLE berth LOGIN');
    const url = await createDatabase();
    return {
      url,
      host,
      port,
      createDatabase,
      admin: (sql, params, on) =>
        admin(sql, params, on === undefined ? undefined : on.replace('//berth@', '//postgres@')),
      async hba(line) {
        const path = join(data, 'pg_hba.conf');
        writeFileSync(path, `${line}\n${readFileSync(path, 'utf8')}`);
        // The server reloads on a signal, a moment later: then a new session's time of the
        // configuration's load is later than it was.
        const loaded = async () =>
          (await admin('SELECT pg_conf_load_time() AS at')).rows[0]?.at.getTime() as number;
        const before = await loaded();
        await admin('SELECT pg_reload_conf()');
        await until(async () => (await loaded()) > before, 'PostgreSQL reloaded pg_hba.conf');
      },
      stop,
      stopServer,
      startServer,
      restart: async () => {
        await stopServer();
        await startServer();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
