/** The first thing an operator runs, on a machine where berth never ran: it reads as empty. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runBerth } from '../helpers/world.ts';

describe('a fresh install, with the default state directory never used', () => {
  let home: string;
  let env: Record<string, string>;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'berth-fresh-'));
    // No --state and no BERTH_STATE (runBerth leaves it out): the default under XDG_STATE_HOME.
    env = { XDG_STATE_HOME: join(home, 'state') };
  });
  after(() => rm(home, { recursive: true, force: true }));

  it('berth status shows an empty state, and makes the directory 0700', async () => {
    const run = await runBerth(['status'], env);
    assert.deepEqual(run, {
      code: 0,
      stdout:
        'local (root /)\n  to run: nothing\n  managed: nothing\n  account: none yet (berth adopt to take one)\n',
      stderr: '',
    });
    const made = await stat(join(home, 'state', 'berth'));
    assert.ok(made.isDirectory());
    assert.equal((made.mode & 0o777).toString(8), '700');
  });

  it('berth log says the journal is empty', async () => {
    assert.deepEqual(await runBerth(['log'], { XDG_STATE_HOME: join(home, 'other') }), {
      code: 0,
      stdout: 'the journal is empty: no act yet\n',
      stderr: '',
    });
  });
});
