/**
 * berth view has the Command API's limits, against anyone who can reach its port (no
 * cookie needed): headers within 10 s, idle keep-alive connections closed, and at most
 * VIEW_CONNECTIONS connections at once; half-sent requests hold nothing past the deadline.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HEADERS_TIMEOUT_MS } from '../../src/http/serve.ts';
import { VIEW_CONNECTIONS } from '../../src/view/served.ts';
import { SAFETY_MS } from '../helpers/safety.ts';
import { type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess } from './view-process.ts';

/** A connection to the view: what it was sent back, and when it was closed (ms after it opened). */
function openTo(port: number, first: string) {
  const socket: Socket = connect(port, '127.0.0.1');
  const opened = performance.now();
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => {});
  const closed = new Promise<{ afterMs: number; received: string }>((done) => {
    const giveUp = setTimeout(() => socket.destroy(), SAFETY_MS);
    socket.on('close', () => {
      clearTimeout(giveUp);
      done({ afterMs: performance.now() - opened, received });
    });
  });
  socket.write(first);
  return { socket, closed };
}

describe('berth view: the limits of the Command API', () => {
  let fleet: Fleet;
  let view: ViewProcess;
  before(async () => {
    fleet = await makeFleet({}, { surveyed: false });
    view = await startView(fleet.world.state);
  });
  after(async () => {
    await view?.stop();
    await fleet?.world.cleanup();
  });

  it(`holds ${VIEW_CONNECTIONS} connections at most, and closes half-sent requests at the header deadline with 408`, async () => {
    const half = `GET / HTTP/1.1\r\nHost: ${view.host}\r\nX-Still: coming`;
    const held = Array.from({ length: VIEW_CONNECTIONS }, () => openTo(view.port, half));
    // Each is accepted (and counted) before the next is asked for.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const oneMore = openTo(view.port, half);
    const dropped = await oneMore.closed;
    assert.ok(dropped.afterMs < 2_000, `one more is closed at once (${dropped.afterMs} ms)`);
    assert.equal(dropped.received, '', 'unanswered');

    const cut = await Promise.all(held.map((connection) => connection.closed));
    for (const { afterMs, received } of cut) {
      assert.ok(afterMs >= HEADERS_TIMEOUT_MS - 500, `not before the deadline (${afterMs} ms)`);
      assert.match(received, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.match(received, /the request did not arrive in time: headers within 10 s/);
    }
    // Once they are gone, the view serves whoever comes.
    const answer = await view.fetch('/');
    assert.equal(answer.status, 401);
  });

  it('closes a keep-alive connection left idle after its answer', async () => {
    const connection = openTo(
      view.port,
      `GET /view.css HTTP/1.1\r\nHost: ${view.host}\r\nConnection: keep-alive\r\n\r\n`,
    );
    const { afterMs, received } = await connection.closed;
    assert.match(received, /^HTTP\/1\.1 401 /, 'answered first');
    // Idle for 5 s, it is closed: well before this bound against a hang.
    assert.ok(afterMs < 15_000, `closed by the view (${afterMs} ms)`);
  });
});
