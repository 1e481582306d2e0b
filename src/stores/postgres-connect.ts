import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import pgpass from 'pgpass';
import type { Seal } from '../vault/seal.ts';
import { migrate } from './postgres-schema.ts';
import { checkStoreUrl } from './store-url.ts';
import { StoreError } from './stores.ts';

export { checkStoreUrl };

export interface ConnectOptions {
  /** How long connecting may take; then the database is said not to answer. */
  connectTimeoutMs?: number;
  /** The most connections this berth keeps: one per open node, the rest for reads. */
  maxConnections?: number;
  /** How long one statement may take before the connection is given up as lost; longer than the wait for a lock. */
  queryTimeoutMs?: number;
  /** What seals the values an earlier berth kept in plain bytes, when the schema is brought up. */
  seal?: Seal;
}

/** A pool of connections to a database whose schema is this berth's, and its words. */
export interface Connected {
  pool: pg.Pool;
  /** Where the database is, as the words name it: `db.lan:5432`. */
  where: string;
  /** A failure of PostgreSQL as a StoreError: what could not be done, and why. */
  failure(error: unknown, doing?: string): StoreError;
}

export const CONNECT_TIMEOUT_MS = 5_000;

/** The server's side of a connection: how soon it finds a controller gone. */
const KEEPALIVES =
  '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3';

/** $PGPASSWORD, else the entry of ~/.pgpass (or $PGPASSFILE) for this connection. */
async function password(params: {
  host?: string;
  port?: number;
  database?: string;
  user?: string;
}): Promise<string | undefined> {
  if (process.env.PGPASSWORD) return process.env.PGPASSWORD;
  return new Promise((resolve) => pgpass(params, resolve));
}

/**
 * Connects to the database of `url` and brings its schema to this berth's. Fails with a
 * StoreError in words: the URL refused, the database not there or not answering, the
 * schema newer than this berth knows.
 */
export async function connectPostgres(
  url: string,
  {
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
    maxConnections = 64,
    queryTimeoutMs = 70_000,
    seal,
  }: ConnectOptions = {},
): Promise<Connected> {
  const refused = checkStoreUrl(url);
  if (refused) throw new StoreError(refused);
  const fromUrl = parseIntoClientConfig(url);
  const config: pg.PoolConfig = {
    application_name: 'berth',
    ...fromUrl,
    // A node's lock goes with its holder's connection. A controller whose machine died
    // sends no goodbye: the server probes a quiet connection after 10 s and ends it
    // after three unanswered probes, so the lock is free within half a minute.
    options: [fromUrl.options, KEEPALIVES].filter(Boolean).join(' '),
    // pg calls it with the connection's parameters, and takes undefined for none; its
    // types know neither.
    password: password as unknown as () => Promise<string>,
    max: maxConnections,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 10_000,
    // A command line that is done does not wait for its idle connections to time out.
    allowExitOnIdle: true,
    query_timeout: queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  const seen = new pg.Client(config);
  const where = seen.host.startsWith('/') ? seen.host : `${seen.host}:${seen.port}`;
  const words = { where, user: seen.user ?? '', database: seen.database ?? '' };
  const pool = new pg.Pool(config);
  // An idle connection whose server went away says so here; the pool drops it, and the
  // next act connects anew.
  pool.on('error', () => {});
  const failure = (error: unknown, doing?: string) => {
    if (error instanceof StoreError) return error;
    const why = whyFailed(error, words, { connectTimeoutMs, maxConnections, pool });
    return new StoreError(doing ? `${doing}: ${why}` : why);
  };
  try {
    const client = await pool.connect();
    try {
      await migrate(client, where, undefined, seal);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw failure(error);
  }
  return { pool, where, failure };
}

/** What went wrong, in words a person can act on; never a password or a value. */
function whyFailed(
  error: unknown,
  { where, user, database }: { where: string; user: string; database: string },
  {
    connectTimeoutMs,
    maxConnections,
    pool,
  }: { connectTimeoutMs: number; maxConnections: number; pool: pg.Pool },
): string {
  const { code, message } = error as { code?: string; message?: string };
  const at = `PostgreSQL at ${where}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `${at} refused the connection`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${at} cannot be found: no such host`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `${at} cannot be reached (${code})`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `the connection to ${at} was lost`;
    case '28P01':
      return `${at} refused the password of user ${user}: give the right one in ~/.pgpass, a PGPASSFILE or $PGPASSWORD`;
    case '28000':
      return `${at} refused user ${user}: ${message}`;
    case '3D000':
      return `${at} has no database ${database}`;
    case '42501':
      return `${at} refused user ${user}: ${message} (berth's tables are made by the database's owner)`;
    case '53300':
      return `${at} has no connection to spare: ${message}`;
    case '57P01':
    case '57P02':
      return `the connection to ${at} was lost: the server shut down`;
    case '57P03':
      return `${at} is starting up or shutting down`;
  }
  const seconds = Math.round(connectTimeoutMs / 1000);
  if (message === 'timeout exceeded when trying to connect') {
    return pool.totalCount >= maxConnections
      ? `all ${maxConnections} of this berth's connections to ${at} stayed in use for ${seconds}s`
      : `${at} did not answer within ${seconds}s`;
  }
  if (/connection timeout|timeout expired/i.test(message ?? ''))
    return `${at} did not answer within ${seconds}s`;
  if (message === 'Query read timeout') return `${at} stopped answering`;
  if (/password must be a string/i.test(message ?? ''))
    return `${at} asks user ${user} for a password, and none was found: give it in ~/.pgpass, a PGPASSFILE or $PGPASSWORD`;
  if (/Connection terminated|not queryable|ended/i.test(message ?? ''))
    return `the connection to ${at} was lost`;
  return `${at}: ${message ?? String(error)}`;
}
