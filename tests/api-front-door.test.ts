/**
 * Node's front door (listen()'s `frontDoor`): the refusals decided from the request line
 * and the Authorization header alone are answered before any Request is made, with the
 * very bytes the app answers them with; everything else, however it is dressed, reaches
 * the app. Two servers over one app and one authenticator, one with the front door and
 * one without, are sent the same bytes and must answer the same bytes (but for Date).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileDeps } from '../src/cli/deps.ts';
import { locateState } from '../src/config/state-dir.ts';
import { createApp } from '../src/http/app.ts';
import type { Authenticator } from '../src/http/authenticator.ts';
import { frontDoor } from '../src/http/front-door.ts';
import { issuerAuthenticator } from '../src/http/issuer-authenticator.ts';
import { listen } from '../src/http/serve.ts';
import { freePort, type Issuer, startIssuer } from './helpers/issuer.ts';
import { rawExchange } from './helpers/reliability.ts';
import { makeWorld, type World } from './helpers/world.ts';

interface Pair {
  door: number;
  through: number;
  /** Requests that reached the app through the server with the front door. */
  reached: () => number;
  /** Closes both servers. */
  close: () => Promise<unknown>;
}

/**
 * Both servers over one app and one authenticator, after a first request through the
 * server without the front door: it learns the issuer's state (its keys, or that it is down).
 */
async function pairOver(state: string, authenticator: Authenticator): Promise<Pair> {
  const stop = new AbortController();
  const app = createApp({ authenticator, ...fileDeps(locateState(state)) });
  let reached = 0;
  const address = { hostname: '127.0.0.1', port: 0 };
  const door = await listen(
    (request) => {
      reached++;
      return app.fetch(request);
    },
    address,
    stop.signal,
    { frontDoor: frontDoor(authenticator) },
  );
  const through = await listen(app.fetch, address, stop.signal);
  const portOf = (url: string) => Number(new URL(url).port);
  await rawExchange(portOf(through.url), request('POST /assign HTTP/1.1'));
  return {
    door: portOf(door.url),
    through: portOf(through.url),
    reached: () => reached,
    close: () => {
      stop.abort();
      return Promise.all([door.closed, through.closed]);
    },
  };
}

/** A request's bytes: its request line, Host, `headers`, and a small JSON body. */
function request(line: string, headers: string[] = []): string {
  const body = '{"node":"box","module":"m"}';
  return [
    line,
    'Host: 127.0.0.1',
    ...headers,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    '',
    body,
  ].join('\r\n');
}

/** What both servers answered the same bytes, Date set aside (it names the second). */
async function bothAnswer(pair: Pair, bytes: string, head = false) {
  const undated = (raw: string) => raw.replace(/\r\nDate: [^\r]*/, '\r\nDate: -');
  const [door, through] = await Promise.all([
    rawExchange(pair.door, bytes, { head }),
    rawExchange(pair.through, bytes, { head }),
  ]);
  return { door: { ...door, raw: undated(door.raw) }, through: undated(through.raw) };
}

describe('the front door while no identity provider answers (the seed)', () => {
  let world: World;
  let pair: Pair;
  before(async () => {
    world = await makeWorld();
    // From the first request on, the issuer is known to be down: the answer is known at once.
    const authenticator = issuerAuthenticator({
      issuer: `http://127.0.0.1:${await freePort()}`,
      audience: 'berth',
      timing: { fetchTimeoutMs: 2_000, retryMs: 60_000 },
    });
    pair = await pairOver(world.state, authenticator);
  });
  after(async () => {
    await pair.close();
    await world.cleanup();
  });

  for (const [what, headers] of [
    ['with a token', ['Authorization: Bearer not.a.token']],
    ['without a token', []],
    ['with Basic credentials', ['Authorization: Basic YTpi']],
    ['with tabs and spaces around its token', ['Authorization: \t Bearer not.a.token \t ']],
  ] as const)
    it(`answers the seed's 401 ${what} itself, in the app's bytes`, async () => {
      const before = pair.reached();
      const { door, through } = await bothAnswer(
        pair,
        request('POST /adopt HTTP/1.1', [...headers]),
      );
      assert.equal(pair.reached(), before, 'the request reached the app');
      assert.equal(door.status, 401);
      assert.match(door.body, /berth cannot yet verify a token from /);
      assert.equal(door.raw, through);
    });

  // Each is asked with a token: the front door would answer it with the token's challenge,
  // where the app reads it otherwise, or answers another status.
  const token = 'Authorization: Bearer not.a.token';
  for (const [what, bytes, head] of [
    ['a query', request('POST /assign?x=1 HTTP/1.1', [token])],
    ['a token in the query', request('POST /assign?access_token=a HTTP/1.1', [token])],
    ['a percent-encoded path', request('POST /%61ssign HTTP/1.1', [token])],
    ['an absolute-form target', request('POST http://127.0.0.1/assign HTTP/1.1', [token])],
    ['a HEAD', request('HEAD /assign HTTP/1.1', [token]), true],
    ['a dot segment', request('POST /a/../assign HTTP/1.1', [token])],
    ['a path with a quote', request('POST /a"b HTTP/1.1', [token])],
    ['an OPTIONS of no route', request('OPTIONS /a%20b HTTP/1.1', [token])],
    ['a TRACE', request('TRACE /nope HTTP/1.1', [token])],
    [
      'an HTTP/1.0 request without Host',
      request('POST /assign HTTP/1.0', [token]).replace('Host: 127.0.0.1\r\n', ''),
    ],
    // Node keeps the first of two Authorization headers; a Request joins them, and finds
    // no token in "Bearer a, Bearer b": the challenge differs.
    [
      'two Authorization headers',
      request('POST /assign HTTP/1.1', [token, 'Authorization: Bearer b']),
    ],
  ] as [string, string, boolean?][])
    it(`hands on ${what} to the app, which answers it as without the front door`, async () => {
      const before = pair.reached();
      const { door, through } = await bothAnswer(pair, bytes, head);
      assert.equal(door.raw, through);
      assert.equal(pair.reached(), before + 1, 'the request did not reach the app');
    });

  for (const [what, target, method] of [
    ['a path that is no route', '/nope', 'POST'],
    ['the root', '/', 'GET'],
    ['a route asked with GET', '/assign', 'GET'],
    ['a route with a slash after it', '/assign/', 'POST'],
    ['a path of every plain character', "/A-Z_a.z~!$&'()*+,;=:@[]/0-9//x", 'PUT'],
    ['a DELETE', '/nodes/web1', 'DELETE'],
    ['a PATCH', '/x', 'PATCH'],
    ['an OPTIONS', '/x', 'OPTIONS'],
  ] as const)
    it(`answers the 404 of ${what} itself, in the app's bytes`, async () => {
      const before = pair.reached();
      const { door, through } = await bothAnswer(
        pair,
        request(`${method} ${target} HTTP/1.1`, [token]),
      );
      assert.equal(pair.reached(), before, 'the request reached the app');
      assert.equal(door.status, 404);
      assert.ok(
        JSON.parse(door.body).refused.startsWith(`no route for ${method} ${target}; `),
        door.body,
      );
      assert.equal(door.raw, through);
    });

  // The adapter makes the Request's URL of the Host, and refuses one that is no host
  // (400) before the app is asked: the front door must not answer it otherwise.
  for (const host of ['a/b', 'a b', '[::1', 'Example.com'])
    it(`hands on a request whose Host is ${JSON.stringify(host)}, answered as without the front door`, async () => {
      for (const line of ['POST /assign HTTP/1.1', 'POST /nope HTTP/1.1']) {
        const bytes = request(line, [token]).replace('Host: 127.0.0.1', `Host: ${host}`);
        const { door, through } = await bothAnswer(pair, bytes);
        assert.equal(door.raw, through);
      }
    });
});

describe('the front door with an issuer that answers', () => {
  let world: World;
  let issuer: Issuer;
  let pair: Pair;
  before(async () => {
    world = await makeWorld({ m: { description: 'a module' } });
    issuer = await startIssuer();
    pair = await pairOver(
      world.state,
      issuerAuthenticator({ issuer: issuer.url, audience: 'berth' }),
    );
  });
  after(async () => {
    await pair.close();
    await issuer.close();
    await world.cleanup();
  });

  it("answers the 401 without a token itself, in the app's bytes", async () => {
    const before = pair.reached();
    const { door, through } = await bothAnswer(pair, request('POST /take HTTP/1.1'));
    assert.equal(pair.reached(), before);
    assert.equal(door.status, 401);
    assert.equal(door.headers['www-authenticate'], 'Bearer realm="berth"');
    assert.equal(door.raw, through);
  });

  it('hands on a token to verify: the app verifies it and acts', async () => {
    const token = await issuer.token({ sub: 'deployer' });
    const before = pair.reached();
    const door = await rawExchange(
      pair.door,
      request('POST /assign HTTP/1.1', [`Authorization: Bearer ${token}`]),
    );
    assert.equal(pair.reached(), before + 1);
    assert.equal(door.status, 200, door.body);
  });
});
