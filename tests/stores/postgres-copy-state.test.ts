/**
 * `berth copy-state --to URL`: a state directory's records, every kind, copied into an
 * empty PostgreSQL store, and a store that is not empty refused.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCopyState } from '../../src/cli/copy-state.ts';
import type { Io } from '../../src/cli/io.ts';
import type { NodeRecord } from '../../src/model/state.ts';
import { copyStateTo } from '../../src/stores/copy-state.ts';
import { fileStores } from '../../src/stores/file-store.ts';
import { openPostgresStores } from '../../src/stores/postgres-store.ts';
import {
  type JournalLine,
  type KeptPreview,
  type KeptSurvey,
  type NewJournalEntry,
  StoreError,
  type Stores,
} from '../../src/stores/stores.ts';
import { entryWords } from '../../src/words/journal.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';

const RECORD: NodeRecord = {
  assigned: ['gitea', 'postgres'],
  managed: { postgres: { since: '2026-11-20T07:00:00.000Z', via: 'take', started: true } },
  account: {
    takenAt: '2026-11-20T06:59:00.000Z',
    modules: {
      postgres: {
        data: [{ path: '/var/lib/postgresql', found: true }],
        secrets: { password: { path: '/etc/pg/pw', found: true, fingerprint: 'abc' } },
        files: { '/etc/pg/conf': { found: true, fingerprint: 'def', mode: '0644' } },
      },
    },
    problems: { nginx: 'its survey hook failed' },
  },
};

/** An assign journaled: `module`, what was assigned, tells the acts apart. */
function entry(node: string, at: string, module: string): NewJournalEntry {
  const result = { command: 'assign', node, module, already: false } as const;
  return { at, actor: 'alice', via: 'cli', act: 'assign', node, module, outcome: 'done', result };
}

/** web1's newest survey: a preview with a diff, its steps and digest. */
const SURVEY: KeptSurvey = {
  node: 'web1',
  at: '2026-11-20T08:30:00.000Z',
  actor: 'alice',
  via: 'api',
  report: {
    digest: 'd'.repeat(64),
    steps: [{ kind: 'write', module: 'gitea', path: '/etc/gitea/app.ini' }],
    blockers: [],
    outcome: 'previewed',
    ms: 41,
  },
  said: 'update gitea:\n  write /etc/gitea/app.ini\n    -port=80\n    +port=8080',
};

function preview(node: string, n: number): KeptPreview {
  return {
    // A digest as berth makes them, 64 hex characters, told apart by node and number.
    digest: `${Buffer.from(node).toString('hex')}${n.toString(16).padStart(3, '0')}`.padEnd(
      64,
      '0',
    ),
    kind: n % 2 ? 'take' : 'converge',
    node,
    at: `2026-11-20T08:${String(n).padStart(2, '0')}:00.000Z`,
    basis: { n, nested: { list: [1, 'two', null] } },
  };
}

/** A journal line as compared: an entry, or the text of a line that is not one. */
const shown = (line: JournalLine) => ('entry' in line ? line.entry : line.notAnEntry);

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = postgresUnavailable();

describe('copy-state into PostgreSQL', () => {
  let server: PostgresServer;
  let dir: string;
  let from: Stores;
  const location = () => ({ dir, createIfMissing: false });
  const secret = new Uint8Array([0, 1, 2, 255, 10, 13, 92, 39, 34]);

  before(async () => {
    if (skip) return;
    server = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'berth-copy-'));
    from = await fileStores(location());
    // web1: a record, a vault with two secrets, previews, a journal.
    const web1 = await from.openNode('web1', 'take');
    await web1.saveRecord(RECORD);
    await web1.vault.put(
      {
        module: 'postgres',
        secret: 'password',
        entry: { value: secret, origin: 'found on web1', at: '2026-11-20T07:00:00.000Z' },
      },
      {
        module: 'gitea',
        secret: 'token',
        entry: {
          value: new TextEncoder().encode('t0ken\n'),
          origin: 'minted',
          at: '2026-11-20T07:01:00.000Z',
        },
      },
    );
    await web1.vault.fingerprintKey();
    for (let n = 1; n <= 3; n++) await web1.keepPreview(preview('web1', n));
    await web1.keepSurvey(SURVEY);
    await web1.journal(entry('web1', '2026-11-20T09:00:01.000Z', 'web1 first'));
    await web1.journal(entry('web1', '2026-11-20T09:00:04.000Z', 'web1 second'));
    await web1.close();
    // db1: a record and a journal only; no vault, no previews.
    const db1 = await from.openNode('db1', 'assign');
    await db1.saveRecord({ assigned: ['redis'], managed: {} });
    await db1.journal(entry('db1', '2026-11-20T09:00:02.000Z', 'db1 first'));
    await db1.journal(entry('db1', '2026-11-20T09:00:02.000Z', 'db1 same time'));
    await db1.close();
    // cache1: opened once, never written.
    await (await from.openNode('cache1', 'status')).close();
    // The unplaced acts, the history from before, a hand edit, and a line cut by a crash.
    await from.journalUnplaced({
      ...entry('No Such', '2026-11-20T09:00:03.000Z', 'refused'),
      outcome: 'refused',
      result: undefined,
      refusal: { kind: 'failed', code: 'failed', command: 'assign', message: 'bad name' },
    });
    // An earlier berth's entry, kept in its words.
    const before = { at: '2026-01-01T00:00:00.000Z', actor: 'alice', via: 'cli', act: 'assign' };
    await appendFile(
      join(dir, 'journal.jsonl'),
      `${JSON.stringify({ ...before, node: 'old', outcome: 'done', said: 'before the nodes had journals' })}\n`,
    );
    await appendFile(join(dir, 'nodes', 'web1', 'journal.jsonl'), 'a note by hand\n');
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('copies every node, record, secret, preview, survey and journal line into an empty store', {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const outcome = await copyStateTo(location(), url);
    assert.deepEqual(outcome, {
      done: `copied 3 nodes (2 records, 2 secrets, 3 previews, 1 survey) and 7 journal lines from ${dir} to PostgreSQL at 127.0.0.1:${server.port}`,
    });

    const to = await openPostgresStores(url);
    try {
      assert.deepEqual(await to.listNodes(), await from.listNodes());
      for (const node of ['web1', 'db1', 'cache1'])
        assert.deepEqual(await to.readNode(node), await from.readNode(node), node);
      assert.deepEqual(await to.readSurveys(), [SURVEY], 'the survey, and no other node has one');

      const [there, here] = [
        await to.openNode('web1', 'check'),
        await from.openNode('web1', 'check'),
      ];
      try {
        assert.deepEqual(
          [...(await there.vault.fingerprintKey())],
          [...(await here.vault.fingerprintKey())],
        );
        const kept = await there.vault.get('postgres', 'password');
        assert.deepEqual(kept && [...kept.value], [...secret]);
        assert.equal(kept?.origin, 'found on web1');
        assert.equal(kept?.at, '2026-11-20T07:00:00.000Z');
        const all = (vault: typeof there.vault) =>
          vault
            .all()
            .then((items) =>
              items.map((item) => `${item.module}/${item.secret}=${[...item.value]}`).sort(),
            );
        assert.deepEqual(await all(there.vault), await all(here.vault));
        for (let n = 1; n <= 3; n++) {
          const digest = preview('web1', n).digest;
          assert.deepEqual(await there.findPreview(digest), await here.findPreview(digest));
          assert.deepEqual(await there.findPreview(digest), preview('web1', n));
        }
      } finally {
        await there.close();
        await here.close();
      }
      // Previews keep their order: the oldest is the first to go.
      const web1 = await to.openNode('web1', 'converge');
      for (let n = 4; n <= 65; n++) await web1.keepPreview(preview('web1', n));
      assert.equal(await web1.findPreview(preview('web1', 1).digest), undefined);
      assert.ok(await web1.findPreview(preview('web1', 2).digest));
      await web1.close();

      const cache1 = await to.openNode('cache1', 'take');
      assert.deepEqual(await cache1.vault.all(), []);
      await cache1.close();

      assert.deepEqual(
        (await to.readJournal()).map(shown),
        (await from.readJournal()).map(shown),
        'the whole journal, in the same order',
      );
      const lines = await to.readJournal();
      assert.deepEqual(
        lines.flatMap((line) => ('entry' in line ? [entryWords(line.entry)] : [])),
        [
          { said: 'before the nodes had journals', error: undefined },
          { said: 'web1 is to run web1 first', error: undefined },
          { said: 'db1 is to run db1 first', error: undefined },
          { said: 'db1 is to run db1 same time', error: undefined },
          { said: '', error: 'assign failed: bad name' },
          { said: 'web1 is to run web1 second', error: undefined },
        ],
      );
      assert.deepEqual(
        lines.flatMap((line) => ('notAnEntry' in line ? [line.notAnEntry] : [])),
        ['a note by hand'],
      );
    } finally {
      await to.close();
    }
  });

  it('refuses a store that is not empty, and changes nothing there', { skip }, async () => {
    const url = await server.createDatabase();
    assert.ok('done' in (await copyStateTo(location(), url)));
    const outcome = await copyStateTo(location(), url);
    assert.deepEqual(outcome, {
      refused: `the store at 127.0.0.1:${server.port} is not empty (3 nodes, 7 journal lines): copy-state copies into an empty store only`,
    });
    const to = await openPostgresStores(url);
    try {
      assert.equal((await to.readJournal()).length, 7);
    } finally {
      await to.close();
    }
  });

  it('refuses a store a controller has used already', { skip }, async () => {
    const url = await server.createDatabase();
    const used = await openPostgresStores(url);
    await used.journalUnplaced(entry('x', '2026-11-21T00:00:00.000Z', 'an act'));
    await used.close();
    const outcome = await copyStateTo(location(), url);
    assert.ok('refused' in outcome && outcome.refused.includes('(0 nodes, 1 journal line'));
  });

  it('does not copy a journal line cut by a crash', { skip }, async () => {
    const url = await server.createDatabase();
    const cut = await mkdtemp(join(tmpdir(), 'berth-copy-cut-'));
    try {
      const stores = await fileStores({ dir: cut, createIfMissing: false });
      const node = await stores.openNode('web1', 'assign');
      await node.journal(entry('web1', '2026-11-20T09:00:00.000Z', 'whole'));
      await node.close();
      await appendFile(join(cut, 'nodes', 'web1', 'journal.jsonl'), '{"at":"2026-11-20T09:00:01');
      const outcome = await copyStateTo({ dir: cut, createIfMissing: false }, url);
      assert.ok('done' in outcome && outcome.done.includes('and 1 journal line from'));
    } finally {
      await rm(cut, { recursive: true, force: true });
    }
  });

  it('exits 0 once copied, 1 when the store is not empty, 3 when it cannot be opened', {
    skip,
  }, async () => {
    const said = { out: '', err: '' };
    const io: Io = {
      out: (text) => {
        said.out += `${text}\n`;
      },
      err: (text) => {
        said.err += `${text}\n`;
      },
      env: {},
    };
    const url = await server.createDatabase();
    assert.equal(await runCopyState(url, location(), false, io), 0);
    assert.match(
      said.out,
      /^copied 3 nodes \(2 records, 2 secrets, 3 previews, 1 survey\) and 7 journal lines from /,
    );
    assert.equal(said.err, '');

    said.out = '';
    assert.equal(await runCopyState(url, location(), false, io), 1);
    assert.match(
      said.err,
      /^the store at 127\.0\.0\.1:\d+ is not empty \(3 nodes, 7 journal lines\)/,
    );
    assert.equal(said.out, '');

    said.err = '';
    assert.equal(await runCopyState(url, location(), true, io), 1);
    const refused = JSON.parse(said.out);
    assert.equal(refused.code, 'store_not_empty');
    assert.equal(refused.format_version, 1);

    said.out = '';
    const down = url.replace(`:${server.port}/`, ':1/');
    assert.equal(await runCopyState(down, location(), false, io), 3);
    assert.equal(
      said.err,
      'the stores cannot be opened: PostgreSQL at 127.0.0.1:1 refused the connection\n',
    );

    await assert.rejects(runCopyState(undefined, location(), false, io), /needs --to URL/);
  });

  it('says so in words when the store cannot be opened', { skip }, async () => {
    await assert.rejects(
      copyStateTo(location(), 'postgresql://berth:pw@127.0.0.1/berth'),
      (error: unknown) => error instanceof StoreError && /carries a password/.test(error.message),
    );
    const url = server.url.replace(`:${server.port}/`, ':1/');
    await assert.rejects(
      copyStateTo(location(), url),
      (error: unknown) =>
        error instanceof StoreError &&
        error.message === 'PostgreSQL at 127.0.0.1:1 refused the connection',
    );
  });
});

describe("copy-state of the state's CA", () => {
  let server: PostgresServer;
  let dir: string;
  before(async () => {
    if (skip) return;
    server = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'berth-copy-ca-'));
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('copies the CA, its key sealed as kept, and refuses a store that has one already', {
    skip,
  }, async () => {
    const location = { dir, createIfMissing: false };
    const from = fileStores(location);
    const made = {
      certificate: '-----BEGIN CERTIFICATE-----\nthe state\n-----END CERTIFICATE-----\n',
      key: new TextEncoder().encode('the CA key'),
      at: '2026-11-20T07:00:00.000Z',
    };
    await from.keepCa(made);
    const url = await server.createDatabase();
    assert.deepEqual(await copyStateTo(location, url), {
      done: `copied 0 nodes (0 records, 0 secrets, 0 previews, 0 surveys, the state's CA) and 0 journal lines from ${dir} to PostgreSQL at 127.0.0.1:${server.port}`,
    });
    const to = await openPostgresStores(url);
    try {
      const kept = await to.readCa();
      assert.equal(kept?.certificate, made.certificate);
      assert.equal(kept?.at, made.at);
      assert.equal(new TextDecoder().decode(await kept?.key()), 'the CA key');
    } finally {
      await to.close();
    }
    // A store where a controller made its own CA is not empty: two CAs would be one too many.
    const other = await server.createDatabase();
    const used = await openPostgresStores(other);
    await used.keepCa({ ...made, certificate: 'another' });
    await used.close();
    assert.deepEqual(await copyStateTo(location, other), {
      refused: `the store at 127.0.0.1:${server.port} is not empty (0 nodes, 0 journal lines, a CA): copy-state copies into an empty store only`,
    });
  });
});
