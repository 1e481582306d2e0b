/**
 * The live stream over a real socket: each event a `data:` line, and a page that goes away
 * stops being followed (no listener is left behind), as does every page when the view stops.
 */
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { SESSION_COOKIE, ViewKeys } from '../../src/view/access.ts';
import { createViewApp } from '../../src/view/app.ts';
import type { Live, LiveEvent } from '../../src/view/live.ts';
import { LIVE_STREAMS } from '../../src/view/live-route.ts';
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
  survey: unused,
  close: async () => {},
};

describe('GET /live', () => {
  const { live, listeners, tell } = countedLive();
  const closing = new AbortController();
  // As berth view does: every stream listens for the one stop.
  setMaxListeners(0, closing.signal);
  let server: Server;
  let origin: string;
  const keys = new ViewKeys();
  const headers = { cookie: `${SESSION_COOKIE}=${keys.spend(new Date())}` };

  before(async () => {
    const app = createViewApp({ source, live, keys, berth: 'berth', closing: closing.signal });
    // As a browser asks it: under the view's own name.
    const listener = getRequestListener(app.fetch);
    server = createServer((request, response) => {
      const at = request.rawHeaders.findIndex((name) => name.toLowerCase() === 'host');
      request.rawHeaders[at + 1] = request.headers.host = `${keys.name}:1`;
      return listener(request, response);
    });
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

  it(`follows at most ${LIVE_STREAMS} pages at once: one more is 503 in words, and one gone frees its place`, async () => {
    const pages = Array.from({ length: LIVE_STREAMS }, () => new AbortController());
    const open = await Promise.all(
      pages.map((page) => fetch(`${origin}/live`, { headers, signal: page.signal })),
    );
    assert.deepEqual(
      open.map((answer) => answer.status),
      pages.map(() => 200),
    );
    await until(() => listeners.size === LIVE_STREAMS);
    const more = await fetch(`${origin}/live`, { headers });
    assert.equal(more.status, 503);
    assert.match(
      await more.text(),
      new RegExp(`follows at most ${LIVE_STREAMS} pages live at once`),
    );
    pages[0]?.abort();
    await until(() => listeners.size === LIVE_STREAMS - 1);
    const again = new AbortController();
    const taken = await fetch(`${origin}/live`, { headers, signal: again.signal });
    assert.equal(taken.status, 200);
    for (const page of [...pages, again]) page.abort();
    await until(() => listeners.size === 0);
  });

  it('ends every stream when the view stops', async () => {
    const answer = await fetch(`${origin}/live`, { headers });
    await until(() => listeners.size === 1);
    closing.abort();
    assert.equal(await answer.text().then(() => 'ended'), 'ended');
    await until(() => listeners.size === 0);
  });
});
