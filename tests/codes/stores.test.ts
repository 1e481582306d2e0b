/**
 * store_not_empty: `berth copy-state --to` a PostgreSQL store that has records already,
 * through the real binary with `--json`. Needs a PostgreSQL server to start here; skipped
 * otherwise.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { bodyOf, codesSeen } from './faces.ts';

const codes = codesSeen('stores');
const skip = postgresUnavailable() ?? false;

describe('copying the state into a store', { skip }, () => {
  let server: PostgresServer;
  let world: World;
  before(async () => {
    server = await startPostgres();
    world = await makeWorld({ note: { description: 'a note' } });
    assert.equal((await world.berth('assign', 'box', 'note')).code, 0);
  });
  after(async () => {
    await world?.cleanup();
    await server?.stop();
  });

  it('store_not_empty: a store with records already, exit 1, nothing copied over them', async () => {
    const url = await server.createDatabase();
    const first = await world.berth('copy-state', '--to', url, '--json');
    assert.equal(first.code, 0, first.stderr);
    const again = await world.berth('copy-state', '--to', url, '--json');
    assert.equal(again.code, 1);
    const answer = { status: again.code, body: bodyOf(again) };
    assert.equal(answer.body.format_version, 1);
    codes.refused('cli node', answer, 'store_not_empty');
  });
});

codes.finally({ skip });
