/**
 * Choosing the stores: the state directory's files by default, the PostgreSQL store when
 * berth.json's `store` or `$BERTH_STORE` names one. What needs no database server.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, runBerth, type World } from '../helpers/world.ts';

const PROBE = resolve(import.meta.dirname, '../helpers/loads-pg.ts');

/** `berth status` in a process of its own; whether it loaded the PostgreSQL driver. */
function statusLoadsPg(state: string): Promise<{ code: number; pg: boolean }> {
  return new Promise((done, fail) => {
    execFile(process.execPath, ['--import', 'tsx', PROBE, state], (error, stdout, stderr) => {
      if (error) fail(new Error(`${error.message}\n${stderr}`));
      else done(JSON.parse(stdout));
    });
  });
}

describe('choosing the stores', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ plain: { description: 'plain' } });
  });
  after(() => world.cleanup());

  it('keeps a file store user clear of the PostgreSQL driver; a store URL loads it', async () => {
    await world.writeSettings({ nodes: { box: { root: world.root } } });
    assert.deepEqual(await statusLoadsPg(world.state), { code: 0, pg: false });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      store: 'postgresql://berth@127.0.0.1:9/berth',
    });
    assert.deepEqual(await statusLoadsPg(world.state), { code: 3, pg: true });
  });

  it('refuses a store that is not a PostgreSQL URL, as a berth.json not valid (exit 1)', async () => {
    await world.writeSettings({ nodes: { box: { root: world.root } }, store: 'mysql://db.lan/x' });
    const path = join(world.state, 'berth.json');
    for (const args of [['status'], ['log'], ['assign', 'box', 'plain']]) {
      const run = await world.berth(...args);
      assert.deepEqual(
        { code: run.code, stderr: run.stderr },
        {
          code: 1,
          stderr: `${path} is not valid: store: a store is a PostgreSQL URL: postgresql://USER@HOST[:PORT]/DATABASE\n`,
        },
        args.join(' '),
      );
    }
  });

  it('refuses a $BERTH_STORE that is not one as the stores not opened (exit 3)', async () => {
    await world.writeSettings({ nodes: { box: { root: world.root } } });
    const run = await runBerth(['--state', world.state, 'assign', 'box', 'plain'], {
      BERTH_STORE: '/var/lib/berth',
    });
    assert.deepEqual(
      { code: run.code, stderr: run.stderr },
      {
        code: 3,
        stderr:
          'the stores cannot be opened: $BERTH_STORE is refused: a store is a PostgreSQL URL: postgresql://USER@HOST[:PORT]/DATABASE\n',
      },
    );
    const files = await runBerth(['--state', world.state, 'assign', 'box', 'plain']);
    assert.equal(files.code, 0, files.stderr);
  });
});
