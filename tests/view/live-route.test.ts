/**
 * The live stream over a real socket: each event a `data:` line, and a page that goes away
 * stops being followed (no listener is left behind), as does every page when the view stops.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { createViewApp } from '../../src/view/app.ts';
import type { Live, LiveEvent } from '../../src/view/live.ts';
import type { ViewSource } from '../../src/view/source.ts';

/** A Live that counts its followers and tells them what a test says. */
function countedLive() {
  const listeners = new Set<(event: LiveEvent) => void>();
  const live: Live = {
    follow(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop: () => listeners.clear(),
  };
  return {
    live,
    listeners,
    tell(event: LiveEvent) {
      for (const listener of listeners) listener(event);
    },
  };
}

const unused = (): never => {
  throw new Error('not read by the live stream');
};
const source: ViewSource = {
  fleet: unused,
  node: unused,
  journal: unused,
  holders: unused,
  close: async () => {},
};

describe('GET /live', () => {
  const { live, listeners, tell } = countedLive();
  const closing = new AbortController();
  let server: Server;
  let origin: string;
  const headers = { cookie: 'berth_view_1=the-token' };

  before(async () => {
    const app = createViewApp({
      source,
      live,
      token: 'the-token',
      cookie: 'berth_view_1',
      berth: 'berth',
      closing: closing.signal,
    });
    server = createServer(getRequestListener(app.fetch));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const until = async (holds: () => boolean) => {
    while (!holds()) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('streams each event as a data line, and lets go of a page that went away', async () => {
    const going = new AbortController();
    const answer = await fetch(`${origin}/live`, { headers, signal: going.signal });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = (answer.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    let read = '';
    while (!read.includes('event: hello')) read += (await reader.read()).value ?? '';
    await until(() => listeners.size === 1);
    tell({ kind: 'let-go', node: 'web1' });
    while (!/let-go.*\n\n/.test(read)) read += (await reader.read()).value ?? '';
    assert.match(read, /^data: {"kind":"let-go","node":"web1"}$/m);
    going.abort();
    await until(() => listeners.size === 0);
  });

  it('answers HEAD without following', async () => {
    const answer = await fetch(`${origin}/live`, { method: 'HEAD', headers });
    assert.equal(answer.status, 200);
    assert.equal(listeners.size, 0);
  });

  it('ends every stream when the view stops', async () => {
    const answer = await fetch(`${origin}/live`, { headers });
    await until(() => listeners.size === 1);
    closing.abort();
    assert.equal(await answer.text().then(() => 'ended'), 'ended');
    await until(() => listeners.size === 0);
  });
});
