/**
 * Slow clients: a client dripping its headers is cut at 10 s while others are served;
 * a client that stalls its body is cut at the whole-request deadline (30 s) and holds
 * neither the lock nor anyone else's turn meanwhile.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/http/serve.ts';
import { inProcessServer, PLAIN, parseAnswer, post, sleep } from '../helpers/reliability.ts';
import { makeWorld, type World } from '../helpers/world.ts';

/** Opens a connection, writes `first`, then `drip()` every `everyMs` until the server closes. */
function slowClient(port: number, first: string, drip?: (n: number) => string, everyMs = 400) {
  return new Promise<{ ms: number; status: number; body: string; raw: string }>((done) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let n = 0;
    const timer = drip
      ? setInterval(() => {
          if (!socket.destroyed) socket.write(drip(n++));
        }, everyMs)
      : undefined;
    const giveUp = setTimeout(() => socket.destroy(), 60_000);
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const answer = parseAnswer(received);
      done({ ms: Date.now() - started, status: answer.status, body: answer.body, raw: received });
    });
    socket.write(first);
  });
}

describe('slow clients', { concurrency: true }, () => {
  let world: World;
  let server: Awaited<ReturnType<typeof inProcessServer>>;
  const logged: string[] = [];
  const consoleError = console.error;
  before(async () => {
    world = await makeWorld();
    for (let i = 0; i < 40; i++) await world.writeModule(`m${i}`, PLAIN);
    console.error = (...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    };
    server = await inProcessServer(world.state);
  });
  after(async () => {
    console.error = consoleError;
    await server.close();
    await world.cleanup();
  });

  it('cuts a client dripping its headers at 10 s, while others are served', async () => {
    const dripping = slowClient(
      server.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      (n) => `X-Drip-${n}: still coming\r\n`,
    );
    const served: number[] = [];
    let stop = false;
    const others = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        const begun = Date.now();
        const answer = await post(
          server.port,
          '/assign',
          JSON.stringify({ node: 'box', module: '' }),
        );
        assert.equal(answer.status, 400, answer.raw);
        served.push(Date.now() - begun);
        await sleep(200);
      }
    })();
    const cut = await dripping;
    stop = true;
    await others;
    assert.ok(
      cut.ms >= HEADERS_TIMEOUT_MS - 1_000 && cut.ms <= HEADERS_TIMEOUT_MS + 1_000,
      `cut after ${cut.ms} ms, not 10 s ± 1 s`,
    );
    assert.equal(cut.status, 408, cut.raw);
    assert.match(JSON.parse(cut.body).refused, /headers/);
    assert.ok(served.length >= 15, `only ${served.length} other requests were served meanwhile`);
    assert.ok(Math.max(...served) < 3_000, `another client waited ${Math.max(...served)} ms`);
  });

  it('cuts a client that stalls its body at 30 s, holding no one up meanwhile', async () => {
    const stalled = slowClient(
      server.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"node":"box","mod',
    );
    // Acts go on while the body is stalled: the lock is not held by a request still reading.
    await sleep(1_000);
    for (let i = 0; i < 20; i++) {
      const begun = Date.now();
      const act = await post(
        server.port,
        '/assign',
        JSON.stringify({ node: 'box', module: `m${i}` }),
      );
      assert.equal(act.status, 200, act.raw);
      assert.ok(Date.now() - begun < 5_000, `an act waited ${Date.now() - begun} ms`);
    }
    const cut = await stalled;
    assert.ok(
      cut.ms >= REQUEST_TIMEOUT_MS - 1_000 && cut.ms <= REQUEST_TIMEOUT_MS + 2_000,
      `cut after ${cut.ms} ms, not at the ${REQUEST_TIMEOUT_MS / 1000} s body deadline`,
    );
    assert.equal(cut.status, 408, cut.raw);
    assert.match(JSON.parse(cut.body).refused, /request/);
    const state = await world.readState();
    assert.deepEqual(
      (state.assignments as Record<string, string[]>).box?.length,
      20,
      'the acts served meanwhile are all kept',
    );
    // A cut body is not an unexpected failure of berth's.
    await sleep(200);
    assert.deepEqual(
      logged.filter((line) => /unexpected/.test(line)),
      [],
    );
  });
});
