/**
 * berth makes and upgrades its own schema: versioned steps, each in a transaction, under
 * a lock; a schema newer than this berth knows is refused in words.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { checkStoreUrl } from '../../src/stores/postgres-connect.ts';
import { MIGRATIONS, migrate, SCHEMA_VERSION } from '../../src/stores/postgres-schema.ts';
import { openPostgresStores } from '../../src/stores/postgres-store.ts';
import { StoreError } from '../../src/stores/stores.ts';
import { entryWords } from '../../src/words/journal.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';

async function versions(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ version: number }>(
      'SELECT version FROM berth_schema ORDER BY version',
    );
    return result.rows.map((row) => row.version);
  } finally {
    await client.end();
  }
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = postgresUnavailable();

describe('the PostgreSQL schema', () => {
  let server: PostgresServer;
  before(async () => {
    if (skip) return;
    server = await startPostgres();
  });
  if (!skip) after(() => server?.stop());

  it('has more than one step, numbered 1, 2, … in order', { skip }, () => {
    assert.ok(MIGRATIONS.length >= 2);
    assert.deepEqual(
      MIGRATIONS.map((step) => step.version),
      MIGRATIONS.map((_, index) => index + 1),
    );
  });

  it('is made in a database berth never used', { skip }, async () => {
    const url = await server.createDatabase();
    const stores = await openPostgresStores(url);
    try {
      assert.deepEqual(await stores.listNodes(), []);
      const node = await stores.openNode('web1', 'assign');
      await node.saveRecord({ assigned: ['redis'], managed: {} });
      await node.close();
    } finally {
      await stores.close();
    }
    assert.deepEqual(
      await versions(url),
      MIGRATIONS.map((step) => step.version),
    );
  });

  it("drops an earlier berth's kept previews at step 4, keeping the records", {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      assert.deepEqual(await migrate(client, 'here', 3), { from: 0, to: 3 });
      await client.query('INSERT INTO berth_nodes (node, record) VALUES ($1, $2::json)', [
        'old1',
        JSON.stringify({ assigned: ['gitea'], managed: {} }),
      ]);
      // A preview an earlier berth kept, with a definition's whole text in its basis.
      const digest = 'e'.repeat(64);
      await client.query(
        'INSERT INTO berth_previews (node, digest, preview) VALUES ($1, $2, $3::json)',
        [
          'old1',
          digest,
          JSON.stringify({
            digest,
            kind: 'converge',
            node: 'old1',
            at: '2026-11-20T08:00:00.000Z',
            basis: {
              definitions: { gitea: { files: { '/etc/a': { content: 'x'.repeat(200_000) } } } },
            },
          }),
        ],
      );
    } finally {
      await client.end();
    }
    assert.deepEqual(await versions(url), [1, 2, 3]);

    const stores = await openPostgresStores(url);
    try {
      assert.deepEqual(
        await versions(url),
        MIGRATIONS.map((step) => step.version),
      );
      assert.deepEqual(await stores.readNode('old1'), { assigned: ['gitea'], managed: {} });
      const node = await stores.openNode('old1', 'assign');
      assert.deepEqual((await node.record()).assigned, ['gitea']);
      assert.equal(
        await node.findPreview('e'.repeat(64)),
        undefined,
        "an earlier berth's preview is dropped",
      );
      await node.close();
    } finally {
      await stores.close();
    }
  });

  it("is upgraded from version 4, losing nothing: each node's newest survey has its table", {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const digest = 'f'.repeat(64);
    const preview = {
      digest,
      kind: 'converge',
      node: 'old1',
      at: '2026-11-20T08:00:00.000Z',
      basis: { definitions: { gitea: 'a'.repeat(64) } },
    };
    const line = JSON.stringify({
      at: '2026-11-20T08:01:00.000Z',
      actor: 'alice',
      via: 'cli',
      act: 'converge',
      node: 'old1',
      outcome: 'done',
      said: 'converged',
    });
    try {
      assert.deepEqual(await migrate(client, 'here', 4), { from: 0, to: 4 });
      await client.query('INSERT INTO berth_nodes (node, record) VALUES ($1, $2::json)', [
        'old1',
        JSON.stringify({ assigned: ['gitea'], managed: {} }),
      ]);
      await client.query(
        'INSERT INTO berth_previews (node, digest, preview) VALUES ($1, $2, $3::json)',
        ['old1', digest, JSON.stringify(preview)],
      );
      await client.query('INSERT INTO berth_journal (node, line) VALUES ($1, $2)', ['old1', line]);
    } finally {
      await client.end();
    }
    assert.deepEqual(
      await versions(url),
      MIGRATIONS.filter((step) => step.version <= 4).map((step) => step.version),
    );

    const stores = await openPostgresStores(url);
    try {
      assert.deepEqual(
        await versions(url),
        MIGRATIONS.map((step) => step.version),
      );
      assert.deepEqual(await stores.readNode('old1'), { assigned: ['gitea'], managed: {} });
      assert.deepEqual(
        (await stores.readJournal()).map((read) =>
          'entry' in read ? entryWords(read.entry).said : '',
        ),
        ['converged'],
      );
      assert.deepEqual(await stores.readSurveys(), [], 'no node was surveyed yet');
      const node = await stores.openNode('old1', 'converge');
      assert.deepEqual(await node.findPreview(digest), preview, 'the kept preview stays');
      const survey = {
        node: 'old1',
        at: '2026-11-20T08:02:00.000Z',
        actor: 'alice',
        via: 'cli' as const,
        report: { digest, steps: [], blockers: [], outcome: 'previewed' as const },
        said: 'old1 is as assigned: nothing to do',
      };
      await node.keepSurvey(survey);
      await node.close();
      assert.deepEqual(await stores.readSurveys(), [survey]);
    } finally {
      await stores.close();
    }
  });

  it("is upgraded from version 5: the state's CA has its table, and none is kept", {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrate(client, 'here', 5);
      await client.query('INSERT INTO berth_nodes (node, record) VALUES ($1, $2::json)', [
        'old1',
        JSON.stringify({ assigned: ['gitea'], managed: {} }),
      ]);
    } finally {
      await client.end();
    }
    const stores = await openPostgresStores(url);
    try {
      assert.deepEqual(await stores.readNode('old1'), { assigned: ['gitea'], managed: {} });
      assert.equal(await stores.readCa(), undefined);
      const made = { certificate: 'the CA', key: new Uint8Array([1, 2]), at: 'now' };
      assert.equal((await stores.keepCa(made)).certificate, 'the CA');
    } finally {
      await stores.close();
    }
  });

  it("is upgraded from version 4, an earlier berth's journal kept line for line and read by its keys", {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // What berth at version 4 journaled: entries with neither target nor digest, an act
    // refused before any node, and a line copied in from a hand-edited state directory.
    const earlier = (node: string, at: string, act: string) =>
      JSON.stringify({ at, actor: 'alice', via: 'cli', act, node, outcome: 'done', said: act });
    const lines: [string | null, string][] = [
      ['web1', earlier('web1', '2026-11-20T08:00:01.000Z', 'assign')],
      ['web2', earlier('web2', '2026-11-20T08:00:02.000Z', 'assign')],
      ['web1', 'a line someone typed'],
      [null, earlier('@nope', '2026-11-20T08:00:03.000Z', 'converge')],
      ['web1', earlier('web1', '2026-11-20T08:00:04.000Z', 'converge')],
    ];
    try {
      await migrate(client, 'here', 4);
      for (const [node, line] of lines)
        await client.query('INSERT INTO berth_journal (node, line) VALUES ($1, $2)', [node, line]);
    } finally {
      await client.end();
    }
    const stores = await openPostgresStores(url);
    try {
      assert.deepEqual(
        await versions(url),
        MIGRATIONS.map((step) => step.version),
      );
      const kept = await server.admin('SELECT line FROM berth_journal ORDER BY id', [], url);
      assert.deepEqual(
        kept.rows.map((row: { line: string }) => row.line),
        lines.map(([, line]) => line),
      );
      const shown = (found: Awaited<ReturnType<typeof stores.readJournal>>) =>
        found.map((line) => ('entry' in line ? `${line.entry.node} ${line.entry.act}` : '(typed)'));
      // A line that is not an entry goes with the entry before it in its node's journal.
      assert.deepEqual(shown(await stores.readJournal()), [
        'web1 assign',
        '(typed)',
        'web2 assign',
        '@nope converge',
        'web1 converge',
      ]);
      const [first] = await stores.readJournal({ about: ['web1'], tail: 5 });
      assert.deepEqual(first, { entry: JSON.parse(lines[0]?.[1] ?? '') });
      assert.deepEqual(shown(await stores.readJournal({ about: ['web1'] })), [
        'web1 assign',
        '(typed)',
        'web1 converge',
      ]);
      assert.deepEqual(shown(await stores.readJournal({ about: ['@nope'] })), ['@nope converge']);
      assert.deepEqual(
        shown(await stores.readJournal({ since: '2026-11-20T08:00:02.000Z', tail: 3 })),
        ['web2 assign', '@nope converge', 'web1 converge'],
      );
    } finally {
      await stores.close();
    }
  });

  it('is refused, in words, when newer than this berth knows', { skip }, async () => {
    const url = await server.createDatabase();
    await (await openPostgresStores(url)).close();
    await server.admin(
      "INSERT INTO berth_schema (version, about) VALUES ($1, 'a later berth')",
      [SCHEMA_VERSION + 1],
      url,
    );
    await assert.rejects(openPostgresStores(url), (error: unknown) => {
      assert.ok(error instanceof StoreError);
      assert.equal(
        error.message,
        `the store at 127.0.0.1:${server.port} has schema version ${SCHEMA_VERSION + 1}; this berth knows up to ${SCHEMA_VERSION}: upgrade berth`,
      );
      return true;
    });
  });

  it('is made once when several controllers start at once, and each of them opens', {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const opened = await Promise.all(
      Array.from({ length: 6 }, () => openPostgresStores(url, { lockWaitMs: 2_000 })),
    );
    try {
      assert.deepEqual(
        await versions(url),
        MIGRATIONS.map((step) => step.version),
      );
      await Promise.all(
        opened.map(async (stores, index) => {
          const node = await stores.openNode(`n${index}`, 'assign');
          await node.close();
        }),
      );
    } finally {
      await Promise.all(opened.map((stores) => stores.close()));
    }
  });
});

describe('a store URL', () => {
  it('is refused when it carries a password, without showing it', async () => {
    for (const url of [
      'postgresql://berth:hunter2@db.lan/berth',
      'postgresql://berth@db.lan/berth?password=hunter2',
    ]) {
      const refusal = checkStoreUrl(url);
      assert.match(refusal ?? '', /carries a password.*~\/\.pgpass.*PGPASSWORD/);
      await assert.rejects(openPostgresStores(url), (error: unknown) => {
        assert.ok(error instanceof StoreError);
        assert.equal(error.message, refusal);
        assert.ok(!error.message.includes('hunter2'));
        return true;
      });
    }
  });

  it('is refused when it is not PostgreSQL', () => {
    assert.match(checkStoreUrl('mysql://berth@db.lan/berth') ?? '', /PostgreSQL URL/);
    assert.match(checkStoreUrl('/var/lib/berth') ?? '', /PostgreSQL URL/);
  });

  it('is taken with a user, a host, a port and a database, or with fewer', () => {
    assert.equal(checkStoreUrl('postgresql://berth@db.lan/berth'), undefined);
    assert.equal(
      checkStoreUrl('postgres://berth@db.lan:5433/berth?sslmode=verify-full'),
      undefined,
    );
    assert.equal(checkStoreUrl('postgresql:///berth'), undefined);
  });
});
