/**
 * The front door (src/http/front-door.ts): the answer Node's server gives before any
 * Request is made must be the app's own answer to the same request, status, headers and
 * body; and whatever it cannot decide from the request line and the Authorization header
 * alone it hands on. Standards only: run by npm test and npm run test:deno alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Config } from '../../src/config/config.ts';
import { createApp } from '../../src/http/app.ts';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { frontDoor } from '../../src/http/front-door.ts';
import { issuerAuthenticator } from '../../src/http/issuer-authenticator.ts';
import { defaultSettings } from '../../src/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import { memoryMachine } from './memory-machine.ts';

/** Port 2 of loopback: nothing listens there, so no identity provider answers. */
const CLOSED = 'http://127.0.0.1:2';
const ROUTES = ['/assign', '/unassign', '/take', '/converge', '/adopt'];
const BODY = '{"node":"box","module":"m"}';

const config: Config = {
  settings: defaultSettings(),
  catalog: {
    names: async () => [],
    entry: async (name) => ({ name, problem: 'none', missing: true }),
  },
};

function appWith(authenticator: Authenticator) {
  return createApp({
    authenticator,
    loadConfig: async () => config,
    stores: memoryStores(),
    machines: () => () => memoryMachine('local'),
  });
}

/** The app's answer to a request, as a Request made of the same parts. */
async function appAnswer(
  app: ReturnType<typeof appWith>,
  method: string,
  target: string,
  authorization: string | undefined,
) {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (authorization !== undefined) headers.Authorization = authorization;
  const response = await app.fetch(
    new Request(new URL(target, 'http://127.0.0.1'), {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? null : BODY,
    }),
  );
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

/** The front door's answer as a Response's parts would read: header names in lower case. */
function doorAnswer(
  door: ReturnType<typeof frontDoor>,
  target: string,
  authorization?: string,
  method = 'POST',
) {
  const answer = door(method, target, authorization);
  if (!answer) return undefined;
  return {
    status: answer.status,
    headers: Object.fromEntries(
      Object.entries(answer.headers).map(([name, value]) => [name.toLowerCase(), value]),
    ),
    body: answer.body,
  };
}

describe('the front door, while no identity provider answers (the seed)', () => {
  const authenticator = issuerAuthenticator({
    issuer: CLOSED,
    audience: 'berth',
    timing: { fetchTimeoutMs: 2_000, retryMs: 60_000 },
  });
  const app = appWith(authenticator);
  const door = frontDoor(authenticator);

  it('hands the first request on: whether the issuer answers is yet to be learned', async () => {
    assert.equal(door('POST', '/assign', 'Bearer not.a.token'), undefined);
    // The app learns it: the issuer is down, and it says so.
    const learned = await appAnswer(app, 'POST', '/assign', 'Bearer not.a.token');
    assert.equal(learned.status, 401);
  });

  for (const route of ROUTES)
    for (const authorization of ['Bearer not.a.token', undefined, 'Basic YTpi'])
      it(`answers POST ${route} (${authorization ?? 'no Authorization'}) as the app does`, async () => {
        const early = doorAnswer(door, route, authorization);
        assert.ok(early, 'the front door handed on a refusal known at once');
        assert.deepEqual(early, await appAnswer(app, 'POST', route, authorization));
        assert.match(early.body, /berth cannot yet verify a token from http:\/\/127\.0\.0\.1:2/);
      });

  it('hands on what it cannot read as the app reads it', () => {
    for (const [method, target] of [
      ['POST', '/assign?access_token=x'],
      ['POST', '/assign?'],
      ['POST', '/%61ssign'],
      ['POST', '/assign#x'],
      ['POST', 'http://127.0.0.1/assign'],
      ['POST', '/a/./b'],
      ['POST', '/a/..'],
      ['POST', '/a b'],
      ['POST', '/a\\b'],
      ['POST', '/{x}'],
      ['HEAD', '/assign'],
      ['HEAD', '/nope'],
      ['TRACE', '/nope'],
      ['post', '/assign'],
    ] as const)
      assert.equal(door(method, target, 'Bearer not.a.token'), undefined, `${method} ${target}`);
  });

  for (const [method, target] of [
    ['POST', '/nope'],
    ['POST', '/assign/'],
    ['GET', '/assign'],
    ['GET', '/'],
    ['PUT', "/A-Z_a.z~!$&'()*+,;=:@[]/0-9//x"],
    ['DELETE', '/a/.b/..c'],
    ['PATCH', '/x'],
    ['OPTIONS', '/x'],
  ] as const)
    it(`answers ${method} ${target} (no route) as the app does`, async () => {
      const early = doorAnswer(door, target, 'Bearer not.a.token', method);
      assert.ok(early, 'the front door handed on a 404 it can answer');
      assert.equal(early.status, 404);
      assert.deepEqual(early, await appAnswer(app, method, target, 'Bearer not.a.token'));
    });
});

describe('the front door, with an authenticator that decides at once', () => {
  const refused = {
    ok: false as const,
    refused: 'refused "at once" \u00e9',
    challenge: 'Bearer realm="berth", error="invalid_token", error_description="at once"',
  };
  const authenticator: Authenticator = {
    authenticate: ({ authorization }) =>
      authorization === 'Bearer good' ? { ok: true, subject: 'alice' } : refused,
  };
  const app = appWith(authenticator);
  const door = frontDoor(authenticator);

  it('answers a refusal as the app does, byte for byte', async () => {
    const early = doorAnswer(door, '/converge', 'Bearer bad');
    assert.deepEqual(early, await appAnswer(app, 'POST', '/converge', 'Bearer bad'));
    assert.deepEqual(early?.headers, {
      'content-type': 'application/json',
      'www-authenticate': refused.challenge,
    });
  });

  it('hands on a request the authenticator accepts: the app answers it', () => {
    assert.equal(door('POST', '/converge', 'Bearer good'), undefined);
  });
});

describe('the front door, with an authenticator that must wait', () => {
  let asked = 0;
  const authenticator: Authenticator = {
    authenticate: () => async () => {
      asked++;
      return { ok: false, refused: 'later', challenge: 'Bearer realm="berth"' };
    },
  };
  const door = frontDoor(authenticator);

  it('hands the request on, and begins no wait of its own', () => {
    assert.equal(door('POST', '/assign', undefined), undefined);
    assert.equal(asked, 0);
  });
});
