/**
 * A team's view: berth view over a PostgreSQL store follows a group act that another
 * controller (a berth process of its own) runs on the same store, to its end.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess } from './view-process.ts';

describe('berth view over a PostgreSQL store', { skip: postgresUnavailable() }, () => {
  let server: PostgresServer;
  let fleet: Fleet;
  let view: ViewProcess;
  before(async () => {
    server = await startPostgres();
    fleet = await makeFleet({ store: server.url });
    view = await startView(fleet.world.state);
  });
  after(async () => {
    await view?.stop();
    await fleet?.world.cleanup();
    await server?.stop();
  });

  it("follows another controller's act on @web to its end", async () => {
    const cookie = await view.cookie();
    const page = await (await view.fetch('/', { headers: { cookie } })).text();
    assert.match(page, /to update/, 'the fleet page is drawn from the PostgreSQL store');
    const stream = await view.fetch('/live', { headers: { cookie } });
    const reader = (stream.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let read = '';
    while (!read.includes('event: hello')) read += (await reader.read()).value ?? '';

    const preview = await fleet.world.berth('converge', '@web');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await fleet.world.actOn(preview, 'converge', '@web');
    assert.equal(act.code, 0, act.stderr);

    const ended = new Map<string, { outcome: string; actor: string }>();
    while (ended.size < 3) {
      read += (await reader.read()).value ?? '';
      for (const line of read.split('\n')) {
        if (!line.startsWith('data: {"kind":"ended"')) continue;
        const event = JSON.parse(line.slice(6));
        ended.set(event.node, { outcome: event.outcome, actor: event.actor });
      }
    }
    await reader.cancel();
    assert.deepEqual([...ended.keys()].sort(), ['web1', 'web2', 'web3']);
    for (const end of ended.values())
      assert.match(`${end.outcome} ${end.actor}`, /^done .+ \(cli\)$/);
  });
});
