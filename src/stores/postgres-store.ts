import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import * as v from 'valibot';
import { isName } from '../model/names.ts';
import { emptyRecord, type NodeRecord, NodeRecordSchema } from '../model/state.ts';
import { processSeal } from '../vault/process-seal.ts';
import { openingEach, type Seal } from '../vault/seal.ts';
import { keptCa, resealedCa, type SealedCa } from './kept-ca.ts';
import { type Connected, type ConnectOptions, connectPostgres } from './postgres-connect.ts';
import {
  clippedEntry,
  type JournalLine,
  journalKeys,
  KEPT_PREVIEWS,
  type KeptPreview,
  KeptPreviewSchema,
  type KeptSurvey,
  KeptSurveySchema,
  type LockHolder,
  LockTimeout,
  lockNotHad,
  mergeJournals,
  type NodeStore,
  parseJournalLine,
  StoreError,
  type Stores,
} from './stores.ts';
import { type Lines, waitTurn } from './turns.ts';

export interface PostgresStoreOptions extends ConnectOptions {
  /** How long an act waits for a node's lock; 10 s as every store. */
  lockWaitMs?: number;
  /** Named as the lock's host in the words of whoever waits; this machine's name by default. */
  host?: string;
}

/**
 * The PostgreSQL stores, with `open` as the state directory's stores will have it (the
 * Stores interface is gaining it): it makes sure the database can be used.
 */
export interface PostgresStores extends Stores {
  /**
   * Connects and brings the schema to this berth's, once; after a failure, tries again
   * when next called. A StoreError says why not: the URL refused, the database not
   * there or not answering, its schema newer than this berth knows.
   */
  open(): Promise<void>;
}

/**
 * The PostgreSQL stores at `url`, for teams that run several controllers over one state.
 * Nothing is connected until first used (or `open`ed), so a controller started while the
 * database is down answers in words, and carries on once it is back. berth makes and
 * upgrades its schema itself. A node's lock is a session-level advisory lock on a
 * connection kept for the act, with a row that names its holder: a controller that dies
 * lets go with its connection. Every write is one statement, committed when its promise
 * resolves, made on the connection that holds the lock, so a write whose lock went with
 * its connection is refused, never made unlocked.
 */
export function postgresStores(url: string, options: PostgresStoreOptions = {}): PostgresStores {
  const lockWaitMs = options.lockWaitMs ?? 10_000;
  const host = options.host ?? hostname();
  const seal = options.seal ?? processSeal();
  const queues: Lines = new Map();
  /** The nodes open now: closing the stores lets go of them. */
  const opened = new Set<NodeStore>();
  let connecting: Promise<Connected> | undefined;
  const ready = () => {
    connecting ??= connectPostgres(url, {
      ...options,
      seal,
      queryTimeoutMs: options.queryTimeoutMs ?? lockWaitMs + 60_000,
    });
    const attempt = connecting;
    return attempt.catch((error) => {
      // The next use tries again; an attempt begun meanwhile is left to run.
      if (connecting === attempt) connecting = undefined;
      throw error;
    });
  };

  const holderOf = async (node: string): Promise<LockHolder | undefined> => {
    const { pool } = await ready();
    const found = await pool
      .query<LockHolder>(
        'SELECT host, pid, act, node, since FROM berth_lock_holders WHERE node = $1',
        [node],
      )
      .catch(() => undefined);
    return found?.rows[0];
  };

  /** A query on the pool, its failure in words. */
  const ask = async <R extends pg.QueryResultRow>(
    doing: string,
    sql: string,
    params: unknown[] = [],
  ) => {
    const { query, failure } = await ready();
    return query<R>(sql, params).catch((error) => {
      throw failure(error, doing);
    });
  };

  /** Whether the store holds no sealed value: only then may berth make itself an identity. */
  const fresh = async () => {
    const found = await ask<{ fresh: boolean }>('the vault cannot be read', FRESH);
    return found.rows[0]?.fresh === true;
  };
  const readCa = async (): Promise<SealedCa | undefined> => {
    const found = await ask<{ certificate: string; key: Buffer; at: string }>(
      "the state's CA cannot be read",
      'SELECT certificate, key, at FROM berth_ca',
    );
    const row = found.rows[0];
    return row && { certificate: row.certificate, at: row.at, sealed: String(row.key) };
  };

  return {
    open: async () => {
      await ready();
    },
    async openNode(node, act) {
      if (!isName(node)) throw new StoreError(`${JSON.stringify(node)} is not a node name`);
      const db = await ready();
      const deadline = Date.now() + lockWaitMs;
      // Acts of this process on one node take turns here first, so that waiting for a
      // node holds no connection.
      const turn = await waitTurn(queues, node, lockWaitMs);
      if (!turn.inTime) {
        turn.pass();
        throw new LockTimeout(lockNotHad(await holderOf(node), node, lockWaitMs));
      }
      const letGo = () => turn.pass();
      let client: pg.PoolClient | undefined;
      // Why the connection ended, when the server said: a write after it says so.
      let lost: Error | undefined;
      const onLost = (error: Error) => {
        lost ??= error;
      };
      try {
        client = await db.connect();
        client.on('error', onLost);
        const wait = `${Math.max(1, deadline - Date.now())}ms`;
        const taken = await client.query<{ kept_record: unknown; kept_key: Buffer | null }>(
          'SELECT kept_record, kept_key FROM berth_take_node($1, $2, $3, $4, $5)',
          [node, host, process.pid, act, wait],
        );
        const row = taken.rows[0];
        const record = recordOf(row?.kept_record, node, db);
        const store = nodeStore({
          node,
          client,
          db,
          record,
          key: row?.kept_key ?? undefined,
          seal,
          lost: () => lost,
          done: () => {
            client?.off('error', onLost);
            opened.delete(store);
            letGo();
          },
        });
        opened.add(store);
        return store;
      } catch (error) {
        // A lock taken on a connection given up goes with that connection.
        client?.off('error', onLost);
        client?.release(true);
        letGo();
        if ((error as { code?: string }).code === '55P03')
          throw new LockTimeout(lockNotHad(await holderOf(node), node, lockWaitMs));
        throw db.failure(error, `the lock of node ${node} cannot be had`);
      }
    },
    async journalUnplaced(entry) {
      const kept = clippedEntry(entry);
      const { at, about } = journalKeys({ entry: kept }, null, '');
      await ask(
        'the journal cannot be written',
        'INSERT INTO berth_journal (line, at, about) VALUES ($1, $2, $3)',
        [JSON.stringify(kept), at, about],
      );
    },
    async listNodes() {
      const found = await ask<{ node: string }>(
        'the nodes cannot be listed',
        'SELECT node FROM berth_nodes',
      );
      return found.rows
        .map((row) => row.node)
        .filter(isName)
        .sort();
    },
    async readNode(node) {
      if (!isName(node)) return emptyRecord();
      const found = await ask<{ record: unknown }>(
        `the record of node ${node} cannot be read`,
        'SELECT record FROM berth_nodes WHERE node = $1',
        [node],
      );
      return recordOf(found.rows[0]?.record, node, await ready());
    },
    async readJournal(query = {}) {
      const { where } = await ready();
      // The query's acts by the lines' keys (journalKeys), the last `tail` of them by time.
      const asked = `SELECT id, node, line FROM berth_journal
         WHERE ($1::text[] IS NULL OR about && $1) AND ($2::text IS NULL OR at >= $2)`;
      const found = await ask<{ id: string; node: string | null; line: string }>(
        'the journal cannot be read',
        query.tail === undefined
          ? `${asked} ORDER BY id`
          : `SELECT * FROM (${asked} ORDER BY at DESC, id DESC LIMIT $3) AS last ORDER BY id`,
        [
          query.about === undefined ? null : [...query.about],
          query.since ?? null,
          ...(query.tail === undefined ? [] : [query.tail]),
        ],
      );
      // Each node's journal, and the unplaced acts', in the order written, in the order
      // of their names (as a state directory lists them); then merged.
      const journals = new Map<string | null, JournalLine[]>();
      for (const row of found.rows) {
        const lines = journals.get(row.node) ?? [];
        lines.push(parseJournalLine(row.line, `row ${row.id} of berth_journal at ${where}`));
        journals.set(row.node, lines);
      }
      const order = [...journals.keys()].sort((a, b) =>
        a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1,
      );
      return mergeJournals(order.map((node) => journals.get(node) ?? []));
    },
    async readSurveys(nodes) {
      const found =
        nodes === undefined
          ? await ask<{ node: string; survey: unknown }>(
              'the surveys cannot be read',
              'SELECT node, survey FROM berth_surveys ORDER BY node COLLATE "C"',
            )
          : await ask<{ node: string; survey: unknown }>(
              'the surveys cannot be read',
              'SELECT node, survey FROM berth_surveys WHERE node = ANY($1) ORDER BY node COLLATE "C"',
              [[...nodes]],
            );
      // One this berth cannot read (another berth's) is left out, as a state directory's is.
      return found.rows.flatMap((row) => {
        const result = v.safeParse(KeptSurveySchema, row.survey);
        return result.success ? [result.output as KeptSurvey] : [];
      });
    },
    async lockHolders(nodes) {
      const found =
        nodes === undefined
          ? await ask<LockHolder>(
              'the locks cannot be read',
              'SELECT host, pid, act, node, since FROM berth_lock_holders ORDER BY node',
            )
          : await ask<LockHolder>(
              'the locks cannot be read',
              'SELECT host, pid, act, node, since FROM berth_lock_holders WHERE node = ANY($1) ORDER BY node',
              [[...nodes]],
            );
      return found.rows;
    },
    readCa: async () => {
      const found = await readCa();
      return found && keptCa(found, seal);
    },
    async keepCa(made) {
      const [sealed = ''] = await seal.seal([made.key], fresh);
      // Two statements: one that began while another berth's insert was not yet committed
      // waits for it and inserts nothing; only a statement after it sees that one's row.
      await ask(
        "the state's CA cannot be written",
        'INSERT INTO berth_ca (certificate, key, at) VALUES ($1, $2, $3) ON CONFLICT (one) DO NOTHING',
        [made.certificate, Buffer.from(sealed), made.at],
      );
      const kept = await readCa();
      if (!kept) throw new StoreError("the state's CA was removed as it was written");
      return keptCa(kept, seal);
    },
    async resealCa() {
      const found = await readCa();
      if (!found) return { resealed: 0, unopened: [] };
      const { sealed, resealed } = await resealedCa(found, seal);
      if (sealed !== undefined)
        await ask(
          "the state's CA cannot be written",
          'UPDATE berth_ca SET key = $1 WHERE certificate = $2',
          [Buffer.from(sealed), found.certificate],
        );
      return resealed;
    },
    async close() {
      await Promise.all([...opened].map((store) => store.close()));
      const was = connecting;
      connecting = undefined;
      const db = await was?.catch(() => undefined);
      await db?.pool.end();
    },
  };
}

/** Whether the store holds no sealed value: no secret, no fingerprint key, no CA. */
const FRESH = `SELECT NOT EXISTS (SELECT 1 FROM berth_secrets)
    AND NOT EXISTS (SELECT 1 FROM berth_nodes WHERE fingerprint_key IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM berth_ca) AS fresh`;

/** The PostgreSQL stores at `url`, opened: see `postgresStores`. */
export async function openPostgresStores(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStores> {
  const stores = postgresStores(url, options);
  await stores.open();
  return stores;
}

interface NodeStoreParts {
  node: string;
  /** The connection that holds the node's lock. */
  client: pg.PoolClient;
  db: Connected;
  record: NodeRecord;
  key: Buffer | undefined;
  seal: Seal;
  /** Why the connection ended, if the server said. */
  lost: () => Error | undefined;
  /** Called once the lock is let go. */
  done: () => void;
}

/**
 * One node's records, opened for one act on the connection that holds its lock. Its
 * record and key came with the lock; the rest is read when asked for.
 */
function nodeStore({
  node,
  client,
  db,
  record: kept,
  key,
  seal,
  lost,
  done,
}: NodeStoreParts): NodeStore {
  let record = kept;
  let sealedKey = key;
  let fingerprintKey: Uint8Array | undefined;
  /** Values opened in this act, by `module/secret`: each is opened once an act. */
  const opened = new Map<string, Uint8Array>();
  let open = true;

  /** One statement on the lock's connection, committed when it resolves. */
  const run = async <R extends pg.QueryResultRow>(
    doing: string,
    sql: string,
    params: unknown[],
  ) => {
    if (!open) throw new StoreError(`the records of node ${node} were closed`);
    try {
      return await db.query<R>(sql, params, client);
    } catch (error) {
      throw db.failure(lost() ?? error, doing);
    }
  };

  /** Whether the store holds no sealed value: only then may berth make itself an identity. */
  const fresh = async () => {
    const found = await run<{ fresh: boolean }>('the vault cannot be read', FRESH, []);
    return found.rows[0]?.fresh === true;
  };
  const openValue = async (module: string, secret: string, sealed: Buffer) => {
    const name = `${module}/${secret}`;
    let value = opened.get(name);
    if (value === undefined) {
      value = await seal.open(String(sealed), `value of ${secret} of ${module} on ${node}`);
      opened.set(name, value);
    }
    return value.slice();
  };
  const allRows = async () =>
    (
      await run<{ module: string; secret: string; value: Buffer }>(
        `the vault of node ${node} cannot be read`,
        'SELECT module, secret, value FROM berth_secrets WHERE node = $1 ORDER BY module, secret',
        [node],
      )
    ).rows;

  return {
    node,
    record: async () => structuredClone(record),
    async saveRecord(next) {
      await run(
        `the record of node ${node} cannot be saved`,
        `INSERT INTO berth_nodes (node, record) VALUES ($1, $2::json)
           ON CONFLICT (node) DO UPDATE SET record = EXCLUDED.record`,
        [node, JSON.stringify(next)],
      );
      record = structuredClone(next);
    },
    vault: {
      async fingerprintKey() {
        if (!sealedKey) {
          // A new key is kept, sealed, before any fingerprint made with it is; a key kept
          // meanwhile wins.
          const [made = ''] = await seal.seal([new Uint8Array(randomBytes(32))], fresh);
          const kept = await run<{ fingerprint_key: Buffer }>(
            `the vault of node ${node} cannot be written`,
            `INSERT INTO berth_nodes AS n (node, fingerprint_key) VALUES ($1, $2)
               ON CONFLICT (node) DO UPDATE
                 SET fingerprint_key = coalesce(n.fingerprint_key, EXCLUDED.fingerprint_key)
               RETURNING fingerprint_key`,
            [node, Buffer.from(made)],
          );
          sealedKey = kept.rows[0]?.fingerprint_key;
        }
        fingerprintKey ??= await seal.open(String(sealedKey ?? ''), `fingerprint key of ${node}`);
        return fingerprintKey.slice();
      },
      async get(module, secret) {
        const found = await run<{ value: Buffer; origin: string; at: string }>(
          `the vault of node ${node} cannot be read`,
          'SELECT value, origin, at FROM berth_secrets WHERE node = $1 AND module = $2 AND secret = $3',
          [node, module, secret],
        );
        const row = found.rows[0];
        return (
          row && {
            value: await openValue(module, secret, row.value),
            origin: row.origin,
            at: row.at,
          }
        );
      },
      async put(...kept) {
        // One statement for all: a row a name (the last put of a name wins, as ON
        // CONFLICT may not meet one row twice in a statement).
        const last = new Map(kept.map((item) => [`${item.module}/${item.secret}`, item]));
        const rows = [...last.values()];
        if (rows.length === 0) return;
        const sealed = await seal.seal(
          rows.map((row) => row.entry.value),
          fresh,
        );
        await run(
          `the vault of node ${node} cannot be written`,
          `INSERT INTO berth_secrets (node, module, secret, value, origin, at)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[])
             ON CONFLICT (node, module, secret) DO UPDATE
               SET value = EXCLUDED.value, origin = EXCLUDED.origin, at = EXCLUDED.at`,
          [
            node,
            rows.map((row) => row.module),
            rows.map((row) => row.secret),
            sealed.map((text) => Buffer.from(text)),
            rows.map((row) => row.entry.origin),
            rows.map((row) => row.entry.at),
          ],
        );
        for (const row of rows) opened.set(`${row.module}/${row.secret}`, row.entry.value.slice());
      },
      async drop(...names) {
        if (names.length === 0) return;
        await run(
          `the vault of node ${node} cannot be written`,
          `DELETE FROM berth_secrets t USING unnest($2::text[], $3::text[]) AS s (module, secret)
             WHERE t.node = $1 AND t.module = s.module AND t.secret = s.secret`,
          [node, names.map((name) => name.module), names.map((name) => name.secret)],
        );
        for (const { module, secret } of names) opened.delete(`${module}/${secret}`);
      },
      async kept() {
        return (
          await run<{ module: string; secret: string }>(
            `the vault of node ${node} cannot be read`,
            'SELECT module, secret FROM berth_secrets WHERE node = $1 ORDER BY module, secret',
            [node],
          )
        ).rows.map(({ module, secret }) => ({ module, secret }));
      },
      async all(modules) {
        const found = (await allRows()).filter((row) => !modules || modules.has(row.module));
        const values = await Promise.all(
          found.map((row) => openValue(row.module, row.secret, row.value)),
        );
        return found.map((row, index) => ({
          module: row.module,
          secret: row.secret,
          value: values[index] as Uint8Array,
        }));
      },
      async reseal() {
        const found = await allRows();
        const { unopened, tryOpen } = openingEach();
        const keyValue =
          sealedKey === undefined
            ? undefined
            : await tryOpen(`the fingerprint key of ${node}`, async () => {
                fingerprintKey ??= await seal.open(String(sealedKey), `fingerprint key of ${node}`);
                return fingerprintKey;
              });
        const values: (Uint8Array | undefined)[] = [];
        for (const row of found)
          values.push(
            await tryOpen(`${row.secret} of ${row.module} on ${node}`, () =>
              openValue(row.module, row.secret, row.value),
            ),
          );
        const rows = found.filter((_, index) => values[index] !== undefined);
        const toSeal = [keyValue, ...values].filter((value) => value !== undefined);
        const sealed = (await seal.seal(toSeal, async () => false)).map((text) =>
          Buffer.from(text),
        );
        const newKey = keyValue === undefined ? undefined : sealed.shift();
        // One statement: the key and the values sealed again together, or none.
        await run(
          `the vault of node ${node} cannot be written`,
          `WITH k AS (
             UPDATE berth_nodes SET fingerprint_key = coalesce($2, fingerprint_key) WHERE node = $1
           )
           UPDATE berth_secrets t SET value = s.value
             FROM unnest($3::text[], $4::text[], $5::bytea[]) AS s (module, secret, value)
             WHERE t.node = $1 AND t.module = s.module AND t.secret = s.secret`,
          [
            node,
            newKey ?? null,
            rows.map((row) => row.module),
            rows.map((row) => row.secret),
            sealed,
          ],
        );
        if (newKey) sealedKey = newKey;
        return { resealed: toSeal.length, unopened };
      },
    },
    async keepPreview(preview) {
      // One statement: the preview kept (a digest kept again counts as new), and all but
      // the node's latest dropped. Both parts see the table as it was before it, so the
      // older ones kept are one fewer than the limit.
      await run(
        `the previews of node ${node} cannot be written`,
        `WITH kept AS (
           INSERT INTO berth_previews (node, digest, preview) VALUES ($1, $2, $3::json)
             ON CONFLICT (node, digest) DO UPDATE
               SET preview = EXCLUDED.preview, kept = EXCLUDED.kept
             RETURNING 1
         )
         DELETE FROM berth_previews
           WHERE node = $1 AND digest <> $2 AND kept NOT IN (
             SELECT kept FROM berth_previews WHERE node = $1 AND digest <> $2
               ORDER BY kept DESC LIMIT $4
           )`,
        [node, preview.digest, JSON.stringify(preview), KEPT_PREVIEWS - 1],
      );
    },
    async findPreview(digest) {
      const found = await run<{ preview: unknown }>(
        `the previews of node ${node} cannot be read`,
        'SELECT preview FROM berth_previews WHERE node = $1 AND digest = $2',
        [node, digest],
      );
      const row = found.rows[0];
      if (!row) return undefined;
      const result = v.safeParse(KeptPreviewSchema, row.preview);
      if (!result.success)
        throw new StoreError(`a kept preview of node ${node} at ${db.where} is not valid`);
      return result.output as KeptPreview;
    },
    async keepSurvey(survey) {
      await run(
        `the survey of node ${node} cannot be written`,
        `INSERT INTO berth_surveys (node, survey) VALUES ($1, $2::json)
           ON CONFLICT (node) DO UPDATE SET survey = EXCLUDED.survey`,
        [node, JSON.stringify(survey)],
      );
    },
    async journal(entry) {
      const kept = clippedEntry(entry);
      const { at, about } = journalKeys({ entry: kept }, node, '');
      await run(
        `the journal of node ${node} cannot be written`,
        'INSERT INTO berth_journal (node, line, at, about) VALUES ($1, $2, $3, $4)',
        [node, JSON.stringify(kept), at, about],
      );
    },
    async close() {
      if (!open) return;
      open = false;
      try {
        if (lost()) throw lost();
        await client.query('SELECT berth_let_go($1)', [node]);
        client.release();
      } catch {
        // The lock goes with the connection: a connection that cannot let go is ended.
        client.release(true);
      } finally {
        done();
      }
    },
  };
}

/** A record as kept, checked; a node with none has the empty record. */
function recordOf(json: unknown, node: string, db: Connected): NodeRecord {
  if (json === null || json === undefined) return emptyRecord();
  const result = v.safeParse(NodeRecordSchema, json);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const where = issue.path?.map((item) => String(item.key)).join('.');
  throw new StoreError(
    `the record of node ${node} at ${db.where} is not valid: ${where ? `${where}: ` : ''}${issue.message}`,
  );
}
