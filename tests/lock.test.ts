/** The lock, in one process: requests queue for it, but no longer than the lock's wait. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { takeLock } from '../src/stores/lock.ts';
import { StoreError } from '../src/stores/stores.ts';

const PURPOSE = { node: 'box', act: 'converge' };

/** Lets the event loop go round, for what was begun to get as far as it can without time. */
async function turns() {
  for (let i = 0; i < 10; i++) await new Promise((done) => setImmediate(done));
}

describe('the lock within one process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-lock-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a second taker gives up at its deadline, naming the holder, while the first still holds it', async (t) => {
    const path = join(dir, 'lock');
    const first = await takeLock(path, PURPOSE, 1_000);
    try {
      // The clock in the test's hands: the wait ends at its deadline, not before.
      t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
      let settled = false;
      const second = takeLock(path, PURPOSE, 300).finally(() => {
        settled = true;
      });
      await turns();
      t.mock.timers.tick(299);
      await turns();
      assert.equal(settled, false, 'gave up before its deadline');
      t.mock.timers.tick(1);
      await assert.rejects(second, (error: unknown) => {
        assert.ok(error instanceof StoreError);
        assert.match(
          error.message,
          new RegExp(
            `^berth process ${process.pid} on \\S+ holds the lock of node box \\(converge, since \\S+\\) and did not let go within 300ms$`,
          ),
        );
        return true;
      });
      assert.ok(await first.stillHeld(), 'the first keeps its lock');
    } finally {
      await first.release();
    }
  });

  it('a second taker gets the lock as soon as the first lets go', async (t) => {
    const path = join(dir, 'lock');
    const first = await takeLock(path, PURPOSE, 1_000);
    // With the clock stopped, no wait can end on its own: only the first letting go.
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
    let taken = false;
    const second = takeLock(path, PURPOSE, 5_000).then((lock) => {
      taken = true;
      return lock;
    });
    await turns();
    assert.equal(taken, false, 'the second took a lock the first still held');
    await first.release();
    const lock = await second;
    assert.ok(await lock.stillHeld());
    await lock.release();
  });

  it("a lock whose file another took is no longer held, even with the same words in it; letting go leaves the other's", async () => {
    const path = join(dir, 'lock');
    const lock = await takeLock(path, PURPOSE, 1_000);
    const words = await readFile(path, 'utf8');
    // Another berth judged this one dead and took the lock: its own file, in a new inode.
    await writeFile(`${path}.other`, words);
    await unlink(path);
    await rename(`${path}.other`, path);
    assert.equal(await lock.stillHeld(), false);
    await lock.release();
    assert.equal(await readFile(path, 'utf8'), words, "the other's lock is left alone");
    await unlink(path);
    assert.equal(await lock.stillHeld(), false, 'a lock file gone is not held');
  });
});
