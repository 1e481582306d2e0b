/**
 * A PostgreSQL store whose database is not there, goes away mid-act, or asks for a
 * password: each says so in words, and the next act carries on once it is back.
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import pg from 'pg';
import { openPostgresStores, postgresStores } from '../../src/stores/postgres-store.ts';
import { StoreError, storesCannotOpen } from '../../src/stores/stores.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';

/** A port that nothing listens on, on 127.0.0.1. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function isStoreError(pattern: RegExp | string) {
  return (error: unknown) => {
    assert.ok(error instanceof StoreError, String(error));
    if (typeof pattern === 'string') assert.equal(error.message, pattern);
    else assert.match(error.message, pattern);
    return true;
  };
}

describe('a PostgreSQL store that cannot be reached', () => {
  it('says the database refused the connection when nothing listens', async () => {
    const port = await closedPort();
    await assert.rejects(
      openPostgresStores(`postgresql://berth@127.0.0.1:${port}/berth`),
      (error: unknown) => {
        assert.equal(
          storesCannotOpen(error),
          `the stores cannot be opened: PostgreSQL at 127.0.0.1:${port} refused the connection`,
        );
        return true;
      },
    );
  });

  it('gives up on a database that does not answer, in a bounded time', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      await assert.rejects(
        openPostgresStores(`postgresql://berth@127.0.0.1:${port}/berth`, {
          connectTimeoutMs: 1_000,
        }),
        isStoreError(`PostgreSQL at 127.0.0.1:${port} did not answer within 1s`),
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = postgresUnavailable();

describe('a PostgreSQL store whose database goes away', () => {
  let server: PostgresServer;
  before(async () => {
    if (skip) return;
    server = await startPostgres();
  });
  if (!skip) after(() => server?.stop());

  it('names a database that is not there', { skip }, async () => {
    const url = `postgresql://berth@127.0.0.1:${server.port}/nowhere`;
    await assert.rejects(
      openPostgresStores(url),
      isStoreError(`PostgreSQL at 127.0.0.1:${server.port} has no database nowhere`),
    );
  });

  it('stops an act whose database went away with what it did, in words; the next act carries on', {
    skip,
  }, async () => {
    const stores = await openPostgresStores(server.url, { lockWaitMs: 2_000 });
    const at = `PostgreSQL at 127.0.0.1:${server.port}`;
    try {
      const opened = await stores.openNode('mid', 'take');
      await opened.saveRecord({ assigned: ['before'], managed: {} });
      await opened.journal({
        at: '2026-11-21T10:00:00.000Z',
        actor: 'alice',
        via: 'cli',
        act: 'take',
        node: 'mid',
        module: 'the first write',
        outcome: 'done',
      });

      await server.stopServer();
      await assert.rejects(
        opened.saveRecord({ assigned: ['after'], managed: {} }),
        isStoreError(
          `the record of node mid cannot be saved: the connection to ${at} was lost: the server shut down`,
        ),
      );
      await assert.rejects(
        opened.vault.put({
          module: 'm',
          secret: 's',
          entry: { value: new Uint8Array([1]), origin: 'x', at: 'y' },
        }),
        isStoreError(
          new RegExp(`^the vault of node mid cannot be written: the connection to ${at} was lost`),
        ),
      );
      await opened.close();

      // While it is down, every act says so.
      await assert.rejects(
        stores.openNode('mid', 'take'),
        isStoreError(`the lock of node mid cannot be had: ${at} refused the connection`),
      );
      await assert.rejects(
        stores.readNode('mid'),
        isStoreError(`the record of node mid cannot be read: ${at} refused the connection`),
      );

      await server.startServer();
      const next = await stores.openNode('mid', 'converge');
      assert.deepEqual((await next.record()).assigned, ['before'], 'what was done stays');
      await next.saveRecord({ assigned: ['again'], managed: {} });
      await next.close();
      assert.deepEqual((await stores.readNode('mid')).assigned, ['again']);
      const said = (await stores.readJournal()).flatMap((line) =>
        'entry' in line && line.entry.node === 'mid' ? [line.entry.module] : [],
      );
      assert.deepEqual(said, ['the first write']);
      assert.deepEqual(await stores.lockHolders(), []);
    } finally {
      await server.startServer();
      await stores.close();
    }
  });

  it('says the database stopped answering when a statement outlasts the query timeout', {
    skip,
  }, async () => {
    const stores = await openPostgresStores(server.url, { queryTimeoutMs: 500 });
    const at = `PostgreSQL at 127.0.0.1:${server.port}`;
    // Another session holds the tables: berth's statements wait on it, unanswered.
    const holder = new pg.Client({ connectionString: server.url });
    await holder.connect();
    try {
      const opened = await stores.openNode('slow', 'assign');
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE berth_nodes, berth_journal IN ACCESS EXCLUSIVE MODE');
      await assert.rejects(
        opened.saveRecord({ assigned: ['redis'], managed: {} }),
        isStoreError(`the record of node slow cannot be saved: ${at} stopped answering`),
      );
      await assert.rejects(
        stores.journalUnplaced({
          at: '2026-11-21T10:00:00.000Z',
          actor: 'alice',
          via: 'cli',
          act: 'assign',
          node: 'slow',
          outcome: 'done',
        }),
        isStoreError(`the journal cannot be written: ${at} stopped answering`),
      );
      await holder.query('ROLLBACK');
      await opened.close();
    } finally {
      await holder.end();
      await stores.close();
    }
  });

  it('answers in words while the database is down at the start, and carries on once it is up', {
    skip,
  }, async () => {
    await server.stopServer();
    const stores = postgresStores(server.url);
    const refused = `PostgreSQL at 127.0.0.1:${server.port} refused the connection`;
    try {
      await assert.rejects(stores.open(), isStoreError(refused));
      await assert.rejects(stores.openNode('late', 'assign'), isStoreError(refused));
      await assert.rejects(stores.listNodes(), isStoreError(refused));
      await server.startServer();
      await stores.open();
      const opened = await stores.openNode('late', 'assign');
      await opened.saveRecord({ assigned: ['redis'], managed: {} });
      await opened.close();
      assert.deepEqual((await stores.readNode('late')).assigned, ['redis']);
    } finally {
      await server.startServer();
      await stores.close();
    }
  });

  it('carries on after a restart between acts, on the connections it kept', { skip }, async () => {
    const stores = await openPostgresStores(server.url);
    try {
      for (const node of ['r1', 'r2', 'r3']) {
        const opened = await stores.openNode(node, 'assign');
        await opened.saveRecord({ assigned: [node], managed: {} });
        await opened.close();
      }
      await server.restart();
      await Promise.all(
        ['r1', 'r2', 'r3'].map(async (node) => {
          const opened = await stores.openNode(node, 'assign');
          assert.deepEqual((await opened.record()).assigned, [node]);
          await opened.close();
        }),
      );
    } finally {
      await stores.close();
    }
  });
});

describe('a PostgreSQL store that asks for a password', () => {
  let server: PostgresServer;
  let url: string;
  let dir: string;
  const saved = { PGPASSWORD: process.env.PGPASSWORD, PGPASSFILE: process.env.PGPASSFILE };
  before(async () => {
    if (skip) return;
    server = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'berth-pgpass-'));
    await server.admin("CREATE ROLE secretive LOGIN PASSWORD 'open sesame'");
    await server.admin('GRANT berth TO secretive');
    await server.hba('host all secretive 127.0.0.1/32 scram-sha-256');
    url = server.url.replace('//berth@', '//secretive@');
  });
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('says none was found when none is given', { skip }, async () => {
    delete process.env.PGPASSWORD;
    process.env.PGPASSFILE = join(dir, 'none');
    await assert.rejects(
      openPostgresStores(url),
      isStoreError(
        `PostgreSQL at 127.0.0.1:${server.port} asks user secretive for a password, and none was found: give it in ~/.pgpass, a PGPASSFILE or $PGPASSWORD`,
      ),
    );
  });

  it('says a wrong one was refused, without showing it', { skip }, async () => {
    process.env.PGPASSWORD = 'not it';
    await assert.rejects(openPostgresStores(url), (error: unknown) => {
      assert.ok(error instanceof StoreError);
      assert.match(error.message, /refused the password of user secretive/);
      assert.ok(!error.message.includes('not it'));
      return true;
    });
  });

  /** An assignment made through stores opened as secretive, and read back by others. */
  async function assignedThrough(node: string) {
    const stores = await openPostgresStores(url);
    try {
      const opened = await stores.openNode(node, 'assign');
      await opened.saveRecord({ ...(await opened.record()), assigned: ['postgres'] });
      await opened.close();
    } finally {
      await stores.close();
    }
    const reader = await openPostgresStores(url);
    try {
      assert.deepEqual((await reader.readNode(node)).assigned, ['postgres']);
    } finally {
      await reader.close();
    }
  }

  it('takes it from $PGPASSWORD', { skip }, async () => {
    process.env.PGPASSWORD = 'open sesame';
    await assignedThrough('web1');
  });

  it('takes it from a PGPASSFILE', { skip }, async () => {
    delete process.env.PGPASSWORD;
    const file = join(dir, 'pgpass');
    await writeFile(file, `127.0.0.1:${server.port}:*:secretive:open sesame\n`);
    await chmod(file, 0o600);
    process.env.PGPASSFILE = file;
    await assignedThrough('web2');
  });
});
