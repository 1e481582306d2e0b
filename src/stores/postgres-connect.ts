import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import pgpass from 'pgpass';
import { checkStoreUrl } from '../model/store-url.ts';
import type { Seal } from '../vault/seal.ts';
import { migrate } from './postgres-schema.ts';
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
  /**
   * A connection from the pool; one not had within the connect timeout fails as
   * ConnectTimedOut, measured here rather than read from pg's words.
   */
  connect(): Promise<pg.PoolClient>;
  /**
   * A query on `client`, else on a connection of the pool had as `connect` has it; one
   * not answered within the query timeout fails as QueryTimedOut, measured here too.
   */
  query<R extends pg.QueryResultRow>(
    sql: string,
    params?: unknown[],
    client?: pg.PoolClient,
  ): Promise<pg.QueryResult<R>>;
  /** Where the database is, as the words name it: `db.lan:5432`. */
  where: string;
  /** A failure of PostgreSQL as a StoreError: what could not be done, and why. */
  failure(error: unknown, doing?: string): StoreError;
}

export const CONNECT_TIMEOUT_MS = 5_000;

/** A connection not had within the connect timeout; `poolFull` when every one was in use. */
class ConnectTimedOut extends Error {
  constructor(readonly poolFull: boolean) {
    super('no connection within the connect timeout');
  }
}

/** A statement not answered within the query timeout: the server stopped answering. */
class QueryTimedOut extends Error {
  constructor() {
    super('no answer within the query timeout');
  }
}

/**
 * Whether an error is pg's own failure of the connection (ended, cut, not queryable, a
 * timeout): pg makes those plain Errors without a code, while the server's carry a
 * SQLSTATE and the socket's an errno; any other class is no failure of the connection.
 */
function uncoded(error: unknown): boolean {
  return (
    error instanceof Error &&
    Object.getPrototypeOf(error) === Error.prototype &&
    typeof (error as { code?: unknown }).code !== 'string'
  );
}

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
  // Set when the server asked for a password and none was found: its failure says so.
  const asked = { withoutPassword: false };
  const fromUrl = parseIntoClientConfig(url);
  const config: pg.PoolConfig = {
    application_name: 'berth',
    ...fromUrl,
    // A node's lock goes with its holder's connection. A controller whose machine died
    // sends no goodbye: the server probes a quiet connection after 10 s and ends it
    // after three unanswered probes, so the lock is free within half a minute.
    options: [fromUrl.options, KEEPALIVES].filter(Boolean).join(' '),
    // pg calls it (with the connection's parameters) only when the server asks for a
    // password, and takes undefined for none; its types know neither.
    password: (async (params: Parameters<typeof password>[0]) => {
      const given = await password(params);
      if (given === undefined) asked.withoutPassword = true;
      return given;
    }) as unknown as () => Promise<string>,
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
    const why = whyFailed(error, words, { connectTimeoutMs, maxConnections, asked });
    return new StoreError(doing ? `${doing}: ${why}` : why);
  };
  const connect = async () => {
    const started = performance.now();
    try {
      return await pool.connect();
    } catch (error) {
      // pg says a timeout only in words: the time it took is the fact berth goes by.
      if (uncoded(error) && performance.now() - started >= connectTimeoutMs - 50)
        throw new ConnectTimedOut(pool.totalCount >= maxConnections);
      throw error;
    }
  };
  const query = async <R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    given?: pg.PoolClient,
  ) => {
    const client = given ?? (await connect());
    const started = performance.now();
    try {
      return await client.query<R>(sql, params);
    } catch (error) {
      // As with connecting, pg says a query's timeout only in words: the time is the fact.
      if (uncoded(error) && performance.now() - started >= queryTimeoutMs - 50)
        throw new QueryTimedOut();
      throw error;
    } finally {
      if (!given) client.release();
    }
  };
  try {
    const client = await connect();
    try {
      await migrate(client, where, undefined, seal);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw failure(error);
  }
  return { pool, connect, query, where, failure };
}

/** What went wrong, in words a person can act on; never a password or a value. */
function whyFailed(
  error: unknown,
  { where, user, database }: { where: string; user: string; database: string },
  {
    connectTimeoutMs,
    maxConnections,
    asked,
  }: { connectTimeoutMs: number; maxConnections: number; asked: { withoutPassword: boolean } },
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
  if (asked.withoutPassword)
    return `${at} asks user ${user} for a password, and none was found: give it in ~/.pgpass, a PGPASSFILE or $PGPASSWORD`;
  if (error instanceof ConnectTimedOut) {
    return error.poolFull
      ? `all ${maxConnections} of this berth's connections to ${at} stayed in use for ${seconds}s`
      : `${at} did not answer within ${seconds}s`;
  }
  if (error instanceof QueryTimedOut) return `${at} stopped answering`;
  if (uncoded(error)) return `the connection to ${at} was lost`;
  return `${at}: ${message ?? String(error)}`;
}
