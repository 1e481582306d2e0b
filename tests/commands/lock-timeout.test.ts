import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FILES } from '../../src/stores/file-store.ts';
import { type Lock, takeLock } from '../../src/stores/lock.ts';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';

/** Another berth (this test's process) holding box's lock while the command line waits for it. */
describe('--lock-timeout, and saying whose lock is waited on', () => {
  let world: World;
  let held: Lock;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    const here = join(world.state, FILES.nodes, 'box');
    await mkdir(here, { recursive: true });
    held = await takeLock(join(here, FILES.lock), { node: 'box', act: 'converge' }, 1_000);
  });
  after(async () => {
    await held.release();
    await world.cleanup();
  });

  const holder = `berth process ${process.pid} on \\S+ \\(converge, since \\S+\\)`;

  it('after a second of waiting, says on stderr whose lock it waits for; gives up at the timeout', async () => {
    const run = await world.berth('assign', 'box', 'postgres', '--lock-timeout', '2s');
    assert.equal(run.code, 3);
    const lines = run.stderr.trimEnd().split('\n');
    assert.match(
      lines[0] as string,
      new RegExp(`^waiting for the lock of box, held by ${holder}$`),
    );
    assert.match(
      lines[1] as string,
      /^the stores cannot be opened: .*holds the lock of node box .* within 2s$/,
    );
  });

  it('a short timeout gives up before a second, and so says nothing of waiting', async () => {
    const run = await world.berth('assign', 'box', 'postgres', '--lock-timeout', '300ms');
    assert.equal(run.code, 3);
    assert.doesNotMatch(run.stderr, /waiting for/);
    assert.match(run.stderr, /did not let go within 300ms\n$/);
  });

  it('a timeout that is no duration is a usage error, before any wait', async () => {
    const run = await world.berth('assign', 'box', 'postgres', '--lock-timeout', 'soon');
    assert.equal(run.code, 2);
    assert.equal(
      run.stderr,
      '--lock-timeout takes a duration, like 500ms, 10s or 2m, not "soon"\n',
    );
  });
});
