/**
 * src/edge/deno.ts: berth's app served by Deno.serve, over the wire. Under Node there is
 * no Deno to serve with, and the suite is skipped; npm run test:deno runs it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Config } from '../../src/config/config.ts';
import { serveOnDeno } from '../../src/edge/deno.ts';
import { defaultSettings } from '../../src/model/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import { memoryMachine } from './memory-machine.ts';

/** What this test uses of Deno's namespace, so that it type-checks under Node too. */
declare const Deno: {
  connect(options: { hostname: string; port: number }): Promise<{
    write(bytes: Uint8Array): Promise<number>;
    readable: ReadableStream<Uint8Array>;
    close(): void;
  }>;
};

const ROUTES = 'POST /assign, POST /unassign, POST /take, POST /converge, POST /adopt';
const onDeno = 'Deno' in globalThis;

describe('berth served by Deno.serve (src/edge/deno.ts)', {
  skip: !onDeno && 'Node has no Deno.serve',
}, () => {
  const stop = new AbortController();
  let base = '';
  let port = 0;
  let finished: Promise<void> | undefined;
  before(async () => {
    const config: Config = {
      settings: defaultSettings(),
      catalog: {
        names: async () => [],
        entry: async (name) => ({ name, problem: 'none', missing: true }),
      },
    };
    let listened = () => {};
    const listening = new Promise<void>((resolve) => {
      listened = resolve;
    });
    const server = serveOnDeno({
      port: 0,
      signal: stop.signal,
      onListen: (address) => {
        port = address.port;
        base = `http://127.0.0.1:${port}`;
        listened();
      },
      authenticator: {
        authenticate: ({ authorization }) =>
          authorization === 'Bearer alice'
            ? { ok: true, subject: 'alice' }
            : { ok: false, refused: 'no', challenge: 'Bearer realm="berth"' },
      },
      loadConfig: async () => config,
      stores: memoryStores(),
      machines: () => () => memoryMachine('local'),
    });
    finished = server.finished;
    await listening;
  });
  after(async () => {
    stop.abort();
    await finished;
  });

  it('answers a command, and the same command unauthenticated 401', async () => {
    const body = JSON.stringify({ node: 'local', module: 'postgres' });
    const ok = await fetch(`${base}/assign`, {
      method: 'POST',
      body,
      headers: { authorization: 'Bearer alice' },
    });
    // The catalog has no postgres: the assignment is kept, and does not resolve (409).
    assert.equal(ok.status, 409);
    assert.equal(ok.headers.get('content-type'), 'application/json');
    assert.equal(((await ok.json()) as { said: string }).said, 'local is to run postgres');
    const refused = await fetch(`${base}/assign`, { method: 'POST', body });
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { refused: 'no', code: 'unauthorized' });
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="berth"');
  });

  it('answers a CONNECT 404 naming its authority, as the Node server does', async () => {
    const connection = await Deno.connect({ hostname: '127.0.0.1', port });
    try {
      await connection.write(
        new TextEncoder().encode(
          'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
        ),
      );
      const reader = connection.readable.getReader();
      let text = '';
      while (!text.includes('}')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      assert.match(text, /^HTTP\/1\.1 404 /);
      assert.ok(
        text.endsWith(
          JSON.stringify({
            refused: `no route for CONNECT example.com:443; berth answers ${ROUTES}`,
            code: 'no_route',
          }),
        ),
        text,
      );
    } finally {
      connection.close();
    }
  });
});
