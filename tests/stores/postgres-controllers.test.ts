/**
 * Several controllers over one PostgreSQL database: acts on one node take turns across
 * them, acts on different nodes run at once, and a controller that dies lets go.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { NodeRecord } from '../../src/model/state.ts';
import { openPostgresStores } from '../../src/stores/postgres-store.ts';
import { type NewJournalEntry, StoreError, type Stores } from '../../src/stores/stores.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { until } from '../helpers/safety.ts';

const HOLDER = fileURLToPath(new URL('../helpers/hold-postgres-node.ts', import.meta.url));

/** An assign journaled: `module`, what was assigned, tells the acts apart. */
function entry(node: string, module: string): NewJournalEntry {
  return {
    at: new Date().toISOString(),
    actor: 'alice',
    via: 'api',
    act: 'assign',
    node,
    module,
    outcome: 'done',
    result: { command: 'assign', node, module, already: false },
  };
}

/** One act: read the node's record, add one module to it, save it, journal the count. */
async function increment(stores: Stores, node: string, who: string) {
  const opened = await stores.openNode(node, 'assign');
  try {
    const record = await opened.record();
    await new Promise((resolve) => setImmediate(resolve));
    const count = record.assigned.length + 1;
    const next: NodeRecord = { ...record, assigned: [...record.assigned, `${who}-${count}`] };
    await opened.saveRecord(next);
    await opened.journal(entry(node, String(count)));
  } finally {
    await opened.close();
  }
}

/** How many sessions of the server wait for an advisory lock (a node's): berth_take_node's wait. */
async function waitersForLocks(server: PostgresServer): Promise<number> {
  const found = await server.admin(
    "SELECT count(*)::int AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
  );
  return found.rows[0]?.waiting ?? 0;
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = postgresUnavailable();

describe('controllers over one PostgreSQL store', () => {
  let server: PostgresServer;
  let one: Stores;
  let two: Stores;
  before(async () => {
    if (skip) return;
    server = await startPostgres();
    one = await openPostgresStores(server.url, { host: 'controller-one', lockWaitMs: 10_000 });
    two = await openPostgresStores(server.url, { host: 'controller-two', lockWaitMs: 10_000 });
  });
  after(async () => {
    if (skip) return;
    await one?.close();
    await two?.close();
    await server?.stop();
  });

  it('lose no update when two write one node at once: 2 × 50 acts', { skip }, async () => {
    await Promise.all([
      (async () => {
        for (let n = 0; n < 50; n++) await increment(one, 'shared', 'one');
      })(),
      (async () => {
        for (let n = 0; n < 50; n++) await increment(two, 'shared', 'two');
      })(),
    ]);
    const record = await one.readNode('shared');
    assert.equal(record.assigned.length, 100, 'every act saw the one before it');
    assert.equal(record.assigned.filter((name) => name.startsWith('one-')).length, 50);
    assert.equal(new Set(record.assigned).size, 100);
    const journal = (await two.readJournal()).flatMap((line) =>
      'entry' in line && line.entry.node === 'shared' ? [line.entry.module] : [],
    );
    assert.deepEqual(
      journal,
      Array.from({ length: 100 }, (_, index) => String(index + 1)),
      'the journal is whole and in order',
    );
  });

  it('run acts on different nodes at once, each whole', { skip }, async () => {
    await Promise.all([
      (async () => {
        for (let n = 0; n < 50; n++) await increment(one, 'apart-one', 'one');
      })(),
      (async () => {
        for (let n = 0; n < 50; n++) await increment(two, 'apart-two', 'two');
      })(),
      (async () => {
        for (let n = 0; n < 50; n++) await increment(one, 'apart-three', 'one');
      })(),
    ]);
    assert.equal((await two.readNode('apart-one')).assigned.length, 50);
    assert.equal((await one.readNode('apart-two')).assigned.length, 50);
    assert.equal((await one.readNode('apart-three')).assigned.length, 50);
    const lines = await one.readJournal();
    for (const node of ['apart-one', 'apart-two', 'apart-three']) {
      const said = lines.flatMap((line) =>
        'entry' in line && line.entry.node === node ? [line.entry.module] : [],
      );
      assert.deepEqual(
        said,
        Array.from({ length: 50 }, (_, index) => String(index + 1)),
      );
    }
  });

  it("does not make one controller's act on a node wait for another's on another node", {
    skip,
  }, async () => {
    const held = await one.openNode('long-hook', 'converge');
    try {
      // Opened while the other is held: one wait for it would end in an error at the deadline.
      const other = await two.openNode('quick', 'assign');
      try {
        const holders = await one.lockHolders(['long-hook', 'quick']);
        assert.deepEqual(
          holders.map((holder) => [holder.node, holder.host, holder.act]).sort(),
          [
            ['long-hook', 'controller-one', 'converge'],
            ['quick', 'controller-two', 'assign'],
          ],
          'each controller holds its own node at once',
        );
      } finally {
        await other.close();
      }
    } finally {
      await held.close();
    }
  });

  it("makes a second controller wait for a node's lock, and names the holder once the wait is over", {
    skip,
  }, async () => {
    const impatient = await openPostgresStores(server.url, { lockWaitMs: 500 });
    const held = await one.openNode('busy', 'converge');
    try {
      const holders = await impatient.lockHolders();
      const holder = holders.find((item) => item.node === 'busy');
      assert.equal(holder?.host, 'controller-one');
      assert.equal(holder?.pid, process.pid);
      assert.equal(holder?.act, 'converge');
      assert.match(holder?.since ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      await assert.rejects(impatient.openNode('busy', 'assign'), (error: unknown) => {
        assert.ok(error instanceof StoreError);
        assert.equal(
          error.message,
          `berth process ${process.pid} on controller-one holds the lock of node busy (converge, since ${holder?.since}) and did not let go within 500ms`,
        );
        return true;
      });

      // Let go while the other waits (PostgreSQL has it waiting on the lock): the other has it at once.
      const waiting = two.openNode('busy', 'assign');
      await until(
        async () => (await waitersForLocks(server)) > 0,
        'the second controller waits for the lock',
      );
      await held.close();
      const next = await waiting;
      assert.equal(
        (await one.lockHolders()).find((item) => item.node === 'busy')?.host,
        'controller-two',
      );
      await next.close();
    } finally {
      await held.close();
      await impatient.close();
    }
    assert.equal(
      (await one.lockHolders()).find((item) => item.node === 'busy'),
      undefined,
    );
  });

  it('frees the lock of a controller killed mid-act, and the next act carries on', {
    skip,
  }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, server.url, 'doomed'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      let said = '';
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (chunk: Buffer) => {
          said += chunk.toString();
          if (said.includes('held\n')) resolve();
        });
        child.once('exit', () => reject(new Error(`the holder exited: ${stderr}`)));
      });
      const holder = (await one.lockHolders()).find((item) => item.node === 'doomed');
      assert.equal(holder?.pid, child.pid);
      assert.equal(holder?.host, 'doomed-controller');

      child.kill('SIGKILL');
      await exited;
      // The server sees the connection close, and the lock goes with it; the row that
      // named the dead holder no longer counts.
      await until(
        async () => !(await one.lockHolders()).some((item) => item.node === 'doomed'),
        'the dead holder is no longer shown',
      );
      const next = await two.openNode('doomed', 'converge');
      assert.deepEqual((await next.record()).assigned, ['held-by-the-doomed']);
      assert.equal(
        (await two.lockHolders()).find((item) => item.node === 'doomed')?.host,
        'controller-two',
      );
      await next.close();
    } finally {
      child.kill('SIGKILL');
    }
  });
});
