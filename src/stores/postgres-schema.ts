import type pg from 'pg';
import { processSeal } from '../vault/process-seal.ts';
import type { Seal } from '../vault/seal.ts';
import { journalKeys, parseJournalLine, StoreError } from './stores.ts';

/**
 * The advisory lock of a node is the pair (NODE_LOCK_CLASS, hashtext(node)): the class
 * keeps berth's locks apart from any other program's in the same database. Two nodes
 * whose names hash alike share a lock; that only makes their acts take turns.
 */
export const NODE_LOCK_CLASS = 0x6265_7274; // "bert"

/**
 * The single-key advisory lock that schema changes and copy-state take for their
 * transaction. A single key is a different lock from every (class, key) pair.
 */
export const SCHEMA_LOCK = 0x62_6572_7468n; // "berth"

export interface Migration {
  version: number;
  about: string;
  sql: string;
  /** A step SQL cannot take (sealing with age), run in the step's transaction after its SQL. */
  run?: (client: pg.ClientBase, seal: Seal) => Promise<void>;
}

/**
 * berth's schema, step by step. A step is never changed once released: a new one is
 * added. Each runs in a transaction of its own, so a database holds every step up to
 * its version and none after.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    about:
      "the records: each node's record and fingerprint key, its vault, its previews; the journal",
    sql: `
      CREATE TABLE berth_nodes (
        node text PRIMARY KEY,
        -- The node's record as JSON; null while nothing was saved.
        record json,
        fingerprint_key bytea
      );
      CREATE TABLE berth_secrets (
        node text NOT NULL REFERENCES berth_nodes (node),
        module text NOT NULL,
        secret text NOT NULL,
        value bytea NOT NULL,
        origin text NOT NULL,
        at text NOT NULL,
        PRIMARY KEY (node, module, secret)
      );
      CREATE TABLE berth_previews (
        node text NOT NULL REFERENCES berth_nodes (node),
        digest text NOT NULL,
        -- The order kept in: a node keeps its latest.
        kept bigserial NOT NULL,
        preview json NOT NULL,
        PRIMARY KEY (node, digest)
      );
      CREATE INDEX berth_previews_by_kept ON berth_previews (node, kept);
      CREATE TABLE berth_journal (
        id bigserial PRIMARY KEY,
        -- Null for an act refused before a node could be opened, and for the history
        -- copied from a state directory's top-level journal.
        node text,
        -- The line as a state directory's journal keeps it: an entry's JSON.
        line text NOT NULL
      );
      CREATE INDEX berth_journal_by_node ON berth_journal (node, id);
    `,
  },
  {
    version: 2,
    about: "the locks: who holds each node's, and taking and letting go of one in a round trip",
    sql: `
      -- A row says who holds a node's lock; the lock itself is a session-level advisory
      -- lock of the holder's connection, so it goes when that connection does. A row
      -- whose connection no longer holds the lock is stale: berth_lock_holders leaves it
      -- out, and the next taker replaces it.
      CREATE TABLE berth_locks (
        node text PRIMARY KEY,
        host text NOT NULL,
        pid integer NOT NULL,
        act text NOT NULL,
        since text NOT NULL,
        backend_pid integer NOT NULL
      );

      CREATE VIEW berth_lock_holders AS
        SELECT l.node, l.host, l.pid, l.act, l.since
        FROM berth_locks l
        WHERE EXISTS (
          SELECT 1 FROM pg_locks k
          WHERE k.locktype = 'advisory' AND k.granted AND k.pid = l.backend_pid
            AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND k.classid = ${NODE_LOCK_CLASS} AND k.objid = hashtext(l.node)::oid
            AND k.objsubid = 2
        );

      -- Waits at most p_wait for the node's lock, names this connection its holder,
      -- and answers the node's record and fingerprint key as they are under the lock.
      -- The holder's row is advisory, so it is committed without waiting for the disk.
      CREATE FUNCTION berth_take_node(p_node text, p_host text, p_pid integer, p_act text, p_wait text)
        RETURNS TABLE (kept_record json, kept_key bytea)
        LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('lock_timeout', p_wait, true);
        PERFORM pg_advisory_lock(${NODE_LOCK_CLASS}, hashtext(p_node));
        PERFORM set_config('lock_timeout', '0', true);
        PERFORM set_config('synchronous_commit', 'off', true);
        INSERT INTO berth_locks AS l (node, host, pid, act, since, backend_pid)
          VALUES (p_node, p_host, p_pid, p_act,
                  to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                  pg_backend_pid())
          ON CONFLICT (node) DO UPDATE
            SET host = EXCLUDED.host, pid = EXCLUDED.pid, act = EXCLUDED.act,
                since = EXCLUDED.since, backend_pid = EXCLUDED.backend_pid;
        INSERT INTO berth_nodes (node) VALUES (p_node) ON CONFLICT (node) DO NOTHING;
        RETURN QUERY SELECT n.record, n.fingerprint_key FROM berth_nodes n WHERE n.node = p_node;
      END $$;

      CREATE FUNCTION berth_let_go(p_node text) RETURNS void
        LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM set_config('synchronous_commit', 'off', true);
        DELETE FROM berth_locks WHERE node = p_node AND backend_pid = pg_backend_pid();
        PERFORM pg_advisory_unlock(${NODE_LOCK_CLASS}, hashtext(p_node));
      END $$;
    `,
  },
  {
    version: 3,
    about: 'the vault sealed: every value and fingerprint key an armored age file',
    sql: `
      COMMENT ON COLUMN berth_secrets.value IS 'an armored age file: the value, sealed';
      COMMENT ON COLUMN berth_nodes.fingerprint_key IS 'an armored age file: the key, sealed';
    `,
    run: sealEarlierValues,
  },
  {
    version: 4,
    about:
      "the kept previews of an earlier berth dropped: they held each definition's whole text, and only served the words of a refused act",
    sql: `
      DELETE FROM berth_previews;
      COMMENT ON COLUMN berth_previews.preview IS 'a kept preview: its basis names each definition by its digest';
    `,
  },
  {
    version: 5,
    about: "each node's newest survey: its converge preview whole, for whoever reads the fleet",
    sql: `
      CREATE TABLE berth_surveys (
        node text PRIMARY KEY REFERENCES berth_nodes (node),
        survey json NOT NULL
      );
    `,
  },
  {
    version: 6,
    about: "the state's CA: its certificate, and its key sealed",
    sql: `
      CREATE TABLE berth_ca (
        -- One row at most: a state has one CA, and the first kept is it.
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        certificate text NOT NULL,
        key bytea NOT NULL,
        at text NOT NULL
      );
      COMMENT ON COLUMN berth_ca.key IS 'an armored age file: the key, sealed';
    `,
  },
  {
    version: 7,
    about:
      "the journal's lines keyed by when and by what they are about (node and target), for berth log's filters; each line kept as it was",
    sql: `
      ALTER TABLE berth_journal ADD COLUMN at text NOT NULL DEFAULT '',
        ADD COLUMN about text[] NOT NULL DEFAULT '{}';
      CREATE INDEX berth_journal_by_at ON berth_journal (at, id);
      CREATE INDEX berth_journal_by_about ON berth_journal USING gin (about);
    `,
    run: keyEarlierLines,
  },
  {
    version: 8,
    about:
      "the journal keeps each act's typed result and refusal (entry version 3), its words made when read; every earlier line kept as it was, read in its own words",
    // Nothing is rewritten: the step says to a berth that knows only the lines of words
    // that this store holds lines it cannot read, so that it refuses the store.
    sql: `
      COMMENT ON COLUMN berth_journal.line IS 'an entry''s JSON: from entry_version 3 its typed result and refusal; before, its words (said, error)';
    `,
  },
];

/**
 * Keys the lines an earlier berth journaled as a state directory reads them (journalKeys),
 * in the migration's transaction; the lines themselves are left as they are.
 */
async function keyEarlierLines(client: pg.ClientBase) {
  const rows = await client.query<{ id: string; node: string | null; line: string }>(
    'SELECT id, node, line FROM berth_journal ORDER BY id FOR UPDATE',
  );
  const before = new Map<string | null, string>();
  const keyed = rows.rows.map(({ id, node, line }) => {
    const keys = journalKeys(parseJournalLine(line, ''), node, before.get(node) ?? '');
    before.set(node, keys.at);
    return { id, ...keys };
  });
  for (let start = 0; start < keyed.length; start += 5_000) {
    const batch = keyed.slice(start, start + 5_000);
    await client.query(
      `UPDATE berth_journal j SET at = k.at, about = ARRAY(SELECT json_array_elements_text(k.about))
         FROM json_to_recordset($1::json) AS k(id bigint, at text, about json) WHERE j.id = k.id`,
      [JSON.stringify(batch)],
    );
  }
}

/**
 * Seals what an earlier berth kept in plain bytes, in the migration's transaction: the
 * store is sealed whole or not at all. These values are no sealed ones, so berth may make
 * itself an identity to seal them to (when berth.json names no recipients).
 */
async function sealEarlierValues(client: pg.ClientBase, seal: Seal) {
  const keys = await client.query<{ node: string; fingerprint_key: Buffer }>(
    'SELECT node, fingerprint_key FROM berth_nodes WHERE fingerprint_key IS NOT NULL FOR UPDATE',
  );
  const secrets = await client.query<{
    node: string;
    module: string;
    secret: string;
    value: Buffer;
  }>('SELECT node, module, secret, value FROM berth_secrets FOR UPDATE');
  const sealed = await seal.seal(
    [
      ...keys.rows.map((row) => new Uint8Array(row.fingerprint_key)),
      ...secrets.rows.map((row) => new Uint8Array(row.value)),
    ],
    async () => true,
  );
  const bytes = sealed.map((text) => Buffer.from(text));
  await client.query(
    `UPDATE berth_nodes n SET fingerprint_key = s.key
       FROM unnest($1::text[], $2::bytea[]) AS s (node, key) WHERE n.node = s.node`,
    [keys.rows.map((row) => row.node), bytes.slice(0, keys.rows.length)],
  );
  await client.query(
    `UPDATE berth_secrets t SET value = s.value
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[]) AS s (node, module, secret, value)
       WHERE t.node = s.node AND t.module = s.module AND t.secret = s.secret`,
    [
      secrets.rows.map((row) => row.node),
      secrets.rows.map((row) => row.module),
      secrets.rows.map((row) => row.secret),
      bytes.slice(keys.rows.length),
    ],
  );
}

/** The newest schema this berth knows. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((step) => step.version));

const VERSION_TABLE = `
  CREATE TABLE IF NOT EXISTS berth_schema (
    version integer PRIMARY KEY,
    about text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

/** The database's schema version: 0 for a database berth never used. */
export async function schemaVersion(client: pg.ClientBase): Promise<number> {
  const found = await client.query<{ table: string | null }>(
    "SELECT to_regclass('berth_schema')::text AS table",
  );
  if (!found.rows[0]?.table) return 0;
  const result = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM berth_schema',
  );
  return result.rows[0]?.version ?? 0;
}

/**
 * Brings the database's schema up to `upTo` (this berth's newest by default). Each step
 * runs in its own transaction under SCHEMA_LOCK, and looks again at the version once it
 * holds the lock, so controllers starting at once apply each step once. A schema newer
 * than this berth knows is refused: an older berth must not write to it.
 */
export async function migrate(
  client: pg.ClientBase,
  where: string,
  upTo = SCHEMA_VERSION,
  seal?: Seal,
): Promise<{ from: number; to: number }> {
  const from = await schemaVersion(client);
  refuseNewer(from, where);
  let version = from;
  for (const step of MIGRATIONS) {
    if (step.version <= version || step.version > upTo) continue;
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK.toString()]);
      await client.query(VERSION_TABLE);
      version = await schemaVersion(client);
      refuseNewer(version, where);
      if (step.version > version) {
        await client.query(step.sql);
        if (step.run) await step.run(client, seal ?? processSeal());
        await client.query('INSERT INTO berth_schema (version, about) VALUES ($1, $2)', [
          step.version,
          step.about,
        ]);
        version = step.version;
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }
  return { from, to: version };
}

function refuseNewer(version: number, where: string) {
  if (version > SCHEMA_VERSION) {
    throw new StoreError(
      `the store at ${where} has schema version ${version}; this berth knows up to ${SCHEMA_VERSION}: upgrade berth`,
    );
  }
}
