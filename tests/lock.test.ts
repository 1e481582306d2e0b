/** The lock, in one process: requests queue for it, but no longer than the lock's wait. */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { takeLock } from '../src/stores/lock.ts';
import { StoreError } from '../src/stores/stores.ts';

const PURPOSE = { node: 'box', act: 'converge' };

describe('the lock within one process', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-lock-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a second taker gives up at its deadline, naming the holder, while the first still holds it', async () => {
    const path = join(dir, 'lock');
    const first = await takeLock(path, PURPOSE, 1_000);
    try {
      await assert.rejects(takeLock(path, PURPOSE, 300), (error: unknown) => {
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

  it('a second taker gets the lock as soon as the first lets go', async () => {
    const path = join(dir, 'lock');
    const first = await takeLock(path, PURPOSE, 1_000);
    const second = takeLock(path, PURPOSE, 5_000);
    setTimeout(() => first.release(), 100);
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
