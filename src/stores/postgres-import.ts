import type pg from 'pg';
import type { NodeRecord } from '../model/state.ts';
import type { SealedCa } from './kept-ca.ts';
import { type ConnectOptions, connectPostgres } from './postgres-connect.ts';
import { SCHEMA_LOCK } from './postgres-schema.ts';
import { journalKeys, type KeptPreview, type KeptSurvey, parseJournalLine } from './stores.ts';

/** One node's records, as a state directory keeps them. */
export interface NodeRecords {
  node: string;
  /** Undefined for a node whose record was never saved. */
  record: NodeRecord | undefined;
  /** Undefined for a node whose vault was never made. */
  fingerprintKey: Uint8Array | undefined;
  secrets: { module: string; secret: string; value: Uint8Array; origin: string; at: string }[];
  /** Oldest first. */
  previews: KeptPreview[];
  /** Undefined for a node never surveyed. */
  survey: KeptSurvey | undefined;
}

/** Every record of a state, to be imported whole. */
export interface StateRecords {
  nodes: NodeRecords[];
  /** The state's CA, its key sealed as kept; undefined while the state has none. */
  ca?: SealedCa;
  /**
   * Every journal line in the order to keep, each with its node; null for the lines of
   * the top-level journal (the unplaced acts, and the history from before).
   */
  journal: { node: string | null; line: string }[];
}

export type ImportOutcome = { imported: { where: string } } | { refused: string };

/** Rows per statement: a state of any size is imported in statements of a bounded size. */
const BATCH = 1_000;

/**
 * Imports a state's records into the PostgreSQL store at `url`, which must be empty:
 * one transaction, so an import that fails leaves the store as empty as it was, under
 * the schema's lock, so two imports cannot both find it empty. The schema is made first.
 * Fails with a StoreError in words when the database cannot be used.
 */
export async function importIntoPostgres(
  url: string,
  records: StateRecords,
  options: ConnectOptions = {},
): Promise<ImportOutcome> {
  const { pool, connect, where, failure } = await connectPostgres(url, options);
  try {
    const client = await connect().catch((error) => {
      throw failure(error);
    });
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK.toString()]);
      const held = await client.query<{ nodes: string; lines: string; cas: string }>(
        `SELECT (SELECT count(*) FROM berth_nodes) AS nodes,
                (SELECT count(*) FROM berth_journal) AS lines,
                (SELECT count(*) FROM berth_ca) AS cas`,
      );
      const { nodes = '0', lines = '0', cas = '0' } = held.rows[0] ?? {};
      if (nodes !== '0' || lines !== '0' || cas !== '0') {
        await client.query('ROLLBACK');
        return {
          refused: `the store at ${where} is not empty (${nodes} nodes, ${lines} journal lines${cas === '0' ? '' : ', a CA'}): copy-state copies into an empty store only`,
        };
      }
      await insertAll(client, records);
      await client.query('COMMIT');
      return { imported: { where } };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw failure(error, `the records cannot be copied into the store at ${where}`);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

async function insertAll(client: pg.PoolClient, { nodes, journal, ca }: StateRecords) {
  if (ca)
    await client.query('INSERT INTO berth_ca (certificate, key, at) VALUES ($1, $2, $3)', [
      ca.certificate,
      Buffer.from(ca.sealed),
      ca.at,
    ]);
  for (const batch of batches(nodes)) {
    await client.query(
      `INSERT INTO berth_nodes (node, record, fingerprint_key)
         SELECT * FROM unnest($1::text[], $2::json[], $3::bytea[])`,
      [
        batch.map((item) => item.node),
        batch.map((item) => (item.record === undefined ? null : JSON.stringify(item.record))),
        batch.map((item) => (item.fingerprintKey ? Buffer.from(item.fingerprintKey) : null)),
      ],
    );
  }
  const secrets = nodes.flatMap((item) =>
    item.secrets.map((secret) => ({ node: item.node, ...secret })),
  );
  for (const batch of batches(secrets)) {
    await client.query(
      `INSERT INTO berth_secrets (node, module, secret, value, origin, at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[])`,
      [
        batch.map((item) => item.node),
        batch.map((item) => item.module),
        batch.map((item) => item.secret),
        batch.map((item) => Buffer.from(item.value)),
        batch.map((item) => item.origin),
        batch.map((item) => item.at),
      ],
    );
  }
  // Kept in order, so each node's latest stay its latest.
  const previews = nodes.flatMap((item) =>
    item.previews.map((preview) => ({ node: item.node, preview })),
  );
  for (const batch of batches(previews)) {
    await client.query(
      `INSERT INTO berth_previews (node, digest, preview)
         SELECT node, digest, preview
           FROM unnest($1::text[], $2::text[], $3::json[]) WITH ORDINALITY AS t(node, digest, preview, n)
           ORDER BY n`,
      [
        batch.map((item) => item.node),
        batch.map((item) => item.preview.digest),
        batch.map((item) => JSON.stringify(item.preview)),
      ],
    );
  }
  const surveys = nodes.flatMap((item) =>
    item.survey ? [{ node: item.node, survey: item.survey }] : [],
  );
  for (const batch of batches(surveys)) {
    await client.query(
      `INSERT INTO berth_surveys (node, survey) SELECT * FROM unnest($1::text[], $2::json[])`,
      [batch.map((item) => item.node), batch.map((item) => JSON.stringify(item.survey))],
    );
  }
  // Each line keyed as the state directory reads it (journalKeys), in its node's journal.
  const before = new Map<string | null, string>();
  const keyed = journal.map(({ node, line }) => {
    const keys = journalKeys(parseJournalLine(line, ''), node, before.get(node) ?? '');
    before.set(node, keys.at);
    return { node, line, ...keys };
  });
  for (const batch of batches(keyed)) {
    await client.query(
      `INSERT INTO berth_journal (node, line, at, about)
         SELECT node, line, at, ARRAY(SELECT json_array_elements_text(about))
           FROM unnest($1::text[], $2::text[], $3::text[], $4::json[])
             WITH ORDINALITY AS t(node, line, at, about, n)
           ORDER BY n`,
      [
        batch.map((item) => item.node),
        batch.map((item) => item.line),
        batch.map((item) => item.at),
        batch.map((item) => JSON.stringify(item.about)),
      ],
    );
  }
}

function batches<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += BATCH)
    out.push(items.slice(start, start + BATCH));
  return out;
}
