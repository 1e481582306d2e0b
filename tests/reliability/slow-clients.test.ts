/**
 * Slow clients: a client dripping its headers is cut at 10 s while others are served;
 * a client that stalls its body is cut at the whole-request deadline (30 s) and holds
 * neither the lock nor anyone else's turn meanwhile.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/http/serve.ts';
import { inProcessServer, PLAIN, parseAnswer, post } from '../helpers/reliability.ts';
import { SAFETY_MS } from '../helpers/safety.ts';
import { makeWorld, type World } from '../helpers/world.ts';

/**
 * Opens a connection, writes `first`, then `drip()` every `everyMs` until the server
 * closes; `onDrip` is told of each drip written.
 */
function slowClient(
  port: number,
  first: string,
  drip?: (n: number) => string,
  onDrip: () => void = () => {},
  everyMs = 400,
) {
  let closed = false;
  const cut = new Promise<{ status: number; body: string; raw: string }>((done) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let n = 0;
    const timer = drip
      ? setInterval(() => {
          if (socket.destroyed) return;
          socket.write(drip(n++));
          onDrip();
        }, everyMs)
      : undefined;
    const giveUp = setTimeout(() => socket.destroy(), SAFETY_MS);
    socket.on('data', (chunk) => {
      received += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      closed = true;
      const answer = parseAnswer(received);
      done({ status: answer.status, body: answer.body, raw: received });
    });
    socket.write(first);
  });
  return { cut, isClosed: () => closed };
}

/** The deadlines' words, as the server answers a request cut at either. */
const TOO_SLOW = `the request did not arrive in time: headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s`;

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
    // The deadline is real time against a real socket: the 10 s are waited for, once.
    // Another is asked at each drip, for as long as the dripping client is not cut.
    let servedMeanwhile = 0;
    const others: Promise<void>[] = [];
    const another = async () => {
      const answer = await post(
        server.port,
        '/assign',
        JSON.stringify({ node: 'box', module: '' }),
      );
      assert.equal(answer.status, 400, answer.raw);
      if (!dripping.isClosed()) servedMeanwhile++;
    };
    const dripping = slowClient(
      server.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      (n) => `X-Drip-${n}: still coming\r\n`,
      () => others.push(another()),
    );
    const cut = await dripping.cut;
    await Promise.all(others);
    assert.equal(cut.status, 408, cut.raw);
    assert.deepEqual(JSON.parse(cut.body), { refused: TOO_SLOW, code: 'request_timeout' });
    assert.ok(servedMeanwhile >= 2, `only ${servedMeanwhile} other requests were served meanwhile`);
  });

  it('cuts a client that stalls its body at 30 s, holding no one up meanwhile', async () => {
    const stalled = slowClient(
      server.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Stalled: yes\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"node":"box","mod',
    );
    // Acts go on while the body is stalled, once it has reached the app: the lock is not
    // held by a request still reading.
    await server.reached((request) => request.headers.get('x-stalled') === 'yes');
    for (let i = 0; i < 20; i++) {
      const act = await post(
        server.port,
        '/assign',
        JSON.stringify({ node: 'box', module: `m${i}` }),
      );
      assert.equal(act.status, 200, act.raw);
    }
    assert.equal(stalled.isClosed(), false, 'the stalled client was cut before the acts were done');
    const cut = await stalled.cut;
    assert.equal(cut.status, 408, cut.raw);
    assert.deepEqual(JSON.parse(cut.body), { refused: TOO_SLOW, code: 'request_timeout' });
    const state = await world.readState();
    assert.deepEqual(
      (state.assignments as Record<string, string[]>).box?.length,
      20,
      'the acts served meanwhile are all kept',
    );
    // A cut body is not an unexpected failure of berth's: said, if at all, before its
    // request is settled.
    await server.settled();
    assert.deepEqual(
      logged.filter((line) => /unexpected/.test(line)),
      [],
    );
  });
});
