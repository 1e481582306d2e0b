import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { noIdentityProvider } from '../src/http/authenticator.ts';
import { metadataUrls, unusableIssuer } from '../src/http/issuer-authenticator.ts';
import type { App } from './helpers/api.ts';
import {
  apiWorld,
  type InProcessApiWorld,
  type ServedApiWorld,
  SUBJECT,
} from './helpers/api-world.ts';
import {
  flipSignatureByte,
  hmacWithPublicKey,
  type Issuer,
  makeKey,
  type SigningKey,
  unsignedToken,
} from './helpers/issuer.ts';
import { SAFETY_MS } from './helpers/safety.ts';
import { makeWorld, POSTGRES, runBerth, type World } from './helpers/world.ts';

/** The clock berth reads (Date) in the test's hands, from now on: `tick` moves it. */
function mockDate(t: TestContext) {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
}

interface Answer {
  status: number;
  body: Record<string, string>;
  challenge: string | null;
  type: string | null;
}

async function post(
  app: App,
  path: string,
  json: unknown,
  token?: string,
  rawBody?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await app.request(path, {
    method: 'POST',
    headers,
    body: rawBody ?? JSON.stringify(json),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, string>,
    challenge: response.headers.get('www-authenticate'),
    type: response.headers.get('content-type'),
  };
}

/** Every file under the state directory and its bytes: "changes nothing" is checked on this. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path] = (await readFile(path)).toString('base64');
  }
  return files;
}

/** The RFC 6750 challenge whose description is `reason` (a pattern anchored at both ends). */
function challengeOf(reason: RegExp): RegExp {
  const description = reason.source.replace(/^\^|\$$/g, '');
  return new RegExp(
    `^Bearer realm="berth", error="invalid_token", error_description="${description}`,
  );
}

describe('bearer tokens from a real issuer on loopback, in process', () => {
  let api: InProcessApiWorld;
  let world: World;
  let issuer: Issuer;
  let app: App;
  before(async () => {
    api = await apiWorld({ modules: { postgres: POSTGRES }, inProcess: {} });
    ({ world, issuer, app } = api);
    // Every asymmetric family berth accepts, published before berth first fetches the keys.
    for (const [kid, alg] of [
      ['ec', 'ES256'],
      ['ed', 'EdDSA'],
      ['ps', 'PS256'],
    ] as const)
      issuer.published.push(await makeKey(kid, alg));
  });
  after(() => api?.close());

  it('lets a valid token reach every route, and journals its subject as the actor', async () => {
    const token = await issuer.token();
    const assigned = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
    assert.deepEqual([assigned.status, assigned.body.said], [200, 'box is to run postgres']);
    assert.equal(assigned.challenge, null);

    const adopted = await post(app, '/adopt', { node: 'box' }, token);
    assert.equal(adopted.status, 200, adopted.body.refused);
    const taken = await post(app, '/take', { node: 'box', module: 'postgres' }, token);
    assert.equal(taken.status, 200, taken.body.refused);
    assert.match(taken.body.said ?? '', /digest [0-9a-f]{64}$/);
    const converged = await post(app, '/converge', { node: 'box' }, token);
    assert.equal(converged.status, 200, converged.body.refused);
    assert.match(converged.body.said ?? '', /digest [0-9a-f]{64}$/);
    const unassigned = await post(app, '/unassign', { node: 'box', module: 'postgres' }, token);
    assert.deepEqual(unassigned.status, 200, unassigned.body.refused);

    const refused = await post(app, '/unassign', { node: 'box', module: 'postgres' }, token);
    assert.equal(refused.status, 409);
    assert.equal(typeof refused.body.said, 'string');
    assert.match(refused.body.refused ?? '', /postgres/);

    const notJson = await post(app, '/assign', undefined, token, '{not json');
    assert.equal(notJson.status, 400);
    assert.match(notJson.body.refused ?? '', /^this is not a request berth understands: /);
    const noModule = await post(app, '/take', { node: 'box' }, token);
    assert.deepEqual(
      [noModule.status, noModule.body],
      [400, { refused: 'both node and module are needed', code: 'fields_missing' }],
    );

    const nowhere = api.appOver(join(world.dir, 'no-such-state'));
    const closed = await post(nowhere, '/adopt', { node: 'box' }, token);
    assert.equal(closed.status, 503);
    assert.match(closed.body.refused ?? '', /^the stores cannot be opened: /);

    const acts = await world.journal();
    assert.deepEqual(
      acts.map((act) => [act.act, act.actor, act.via, act.outcome]),
      [
        ['assign', SUBJECT, 'api', 'done'],
        ['adopt', SUBJECT, 'api', 'done'],
        ['unassign', SUBJECT, 'api', 'done'],
        ['unassign', SUBJECT, 'api', 'refused'],
      ],
    );
  });

  it('accepts ES256, EdDSA and PS256 signatures from published keys', async () => {
    for (const kid of ['ec', 'ed', 'ps']) {
      const key = issuer.published.find((published) => published.kid === kid);
      const token = await issuer.token({ sub: `svc-${kid}` }, key);
      const answer = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.equal(answer.status, 200, `${kid}: ${answer.body.refused}`);
    }
    const actors = (await world.journal()).slice(-3).map((act) => act.actor);
    assert.deepEqual(actors, ['svc-ec', 'svc-ed', 'svc-ps']);
  });

  it('allows clocks 30 s of leeway on exp and nbf, and no more', async () => {
    const now = Math.floor(Date.now() / 1000);
    const within = [await issuer.token({ exp: now - 20 }), await issuer.token({ nbf: now + 20 })];
    for (const token of within)
      assert.equal((await post(app, '/adopt', { node: 'box' }, token)).status, 200);
    const beyond = [await issuer.token({ exp: now - 40 }), await issuer.token({ nbf: now + 40 })];
    for (const token of beyond)
      assert.equal((await post(app, '/adopt', { node: 'box' }, token)).status, 401);
  });

  it('refuses every bad token with 401, its own reason and an RFC 6750 challenge, changing nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = await makeKey('key-9');
    const impostor = await makeKey('key-1');
    const valid = await issuer.token();
    const garbage = (() => {
      const part = () => randomBytes(2560).toString('base64url');
      return `${part()}.${part()}.${part()}`.slice(0, 10 * 1024);
    })();
    const cases: [string, string | undefined, RegExp][] = [
      [
        'alg none',
        unsignedToken({ iss: issuer.url, aud: 'berth', sub: 'mallory', exp: now + 300 }),
        /^the token is not signed with an algorithm berth accepts/,
      ],
      [
        'HS256 keyed with the public key',
        await hmacWithPublicKey(issuer.published[0] as SigningKey, {
          iss: issuer.url,
          aud: 'berth',
          sub: 'mallory',
          exp: now + 300,
        }),
        /^the token is not signed with an algorithm berth accepts/,
      ],
      ['expired', await issuer.token({ exp: now - 120 }), /^the token has expired \(at \d{4}-/],
      ['without exp', await issuer.token({ exp: undefined }), /^the token has no expiry \(exp\)/],
      [
        'nbf in the future',
        await issuer.token({ nbf: now + 3600 }),
        /^the token is not valid yet \(not before \d{4}-/,
      ],
      [
        'another iss',
        await issuer.token({ iss: 'https://id.example.org' }),
        new RegExp(`^the token is from issuer https://id\\.example\\.org, not ${issuer.url}$`),
      ],
      [
        'iss with a trailing slash',
        await issuer.token({ iss: `${issuer.url}/` }),
        new RegExp(`^the token is from issuer ${issuer.url}/, not ${issuer.url}$`),
      ],
      [
        'another aud',
        await issuer.token({ aud: ['grafana', 'forgejo'] }),
        /^the token is for audience grafana, forgejo, not berth$/,
      ],
      [
        'without sub',
        await issuer.token({ sub: undefined }),
        /^the token names no subject \(sub\)/,
      ],
      [
        'an unknown kid',
        await issuer.token({}, stranger),
        new RegExp(`^the token is signed with a key that ${issuer.url} does not publish$`),
      ],
      [
        'another key under a published kid',
        await issuer.token({}, impostor),
        /^the token's signature does not verify with the keys of /,
      ],
      [
        'a flipped signature byte',
        flipSignatureByte(valid),
        /^the token's signature does not verify with the keys of /,
      ],
      ['10 KB of garbage', garbage, /^the token is not a signed JWT/],
    ];
    const before = await snapshot(world.state);
    for (const [name, token, reason] of cases) {
      const answer = await post(app, '/assign', { node: 'box', module: 'mallory' }, token);
      assert.equal(answer.status, 401, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.type, 'application/json');
      assert.match(answer.body.refused ?? '', reason, name);
      assert.deepEqual(Object.keys(answer.body), ['refused', 'code'], name);
      assert.match(answer.challenge ?? '', challengeOf(reason), name);
      const signature = (token ?? '').split('.').at(-1) ?? '';
      for (const echoed of [answer.body.refused ?? '', answer.challenge ?? ''])
        assert.ok(
          !signature || !echoed.includes(signature.slice(0, 16)),
          `${name} echoed the token`,
        );
    }
    assert.deepEqual(await snapshot(world.state), before, 'a refused token changed the state');
  });

  it('answers a request without a token with a bare challenge, and one in the query string with invalid_request', async () => {
    const before = await snapshot(world.state);
    const bare = await post(app, '/adopt', { node: 'box' });
    assert.equal(bare.status, 401);
    assert.equal(bare.challenge, 'Bearer realm="berth"');
    assert.equal(
      bare.body.refused,
      `berth needs a bearer token from ${issuer.url}: send "Authorization: Bearer <token>"`,
    );
    const basic = await app.request('/adopt', {
      method: 'POST',
      headers: { authorization: 'Basic YWxpY2U6aHVudGVyMg==' },
      body: '{"node":"box"}',
    });
    assert.equal(basic.status, 401);
    assert.equal(basic.headers.get('www-authenticate'), 'Bearer realm="berth"');

    const token = await issuer.token();
    const inQuery = await post(app, `/adopt?access_token=${token}`, { node: 'box' });
    assert.equal(inQuery.status, 401);
    assert.match(inQuery.body.refused ?? '', /never from the query string/);
    assert.match(inQuery.challenge ?? '', /^Bearer realm="berth", error="invalid_request", /);
    assert.ok(!JSON.stringify(inQuery.body).includes(token));
    assert.deepEqual(await snapshot(world.state), before);
  });

  it('fetches the keys once for a burst of tokens naming keys it does not have (cooldown 30 s)', async () => {
    const fetched = issuer.hits(issuer.jwksPath);
    assert.equal(fetched, 1, 'berth fetched the keys once for all the tests before this one');
    const strangers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => makeKey(`unknown-${index}`, 'ES256')),
    );
    const tokens = await Promise.all(strangers.map((key) => issuer.token({}, key)));
    const answers = await Promise.all(
      tokens.map((token) => post(app, '/assign', { node: 'box', module: 'x' }, token)),
    );
    assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([401]));
    assert.match(answers[0]?.body.refused ?? '', /does not publish$/);
    assert.equal(issuer.hits(issuer.jwksPath), 1, 'a burst of unknown kids fetched the keys');
    assert.equal(issuer.hits('/.well-known/openid-configuration'), 1);
  });
});

describe('when the issuer cannot be had', () => {
  it('answers that it cannot yet verify a token while the issuer is down, and notices it coming up without a restart', async (t) => {
    const said: string[] = [];
    const retryMs = 3_000;
    const api = await apiWorld({
      modules: { postgres: POSTGRES },
      issuerDown: true,
      inProcess: { timing: { retryMs }, log: (line) => said.push(line) },
    });
    const { app, issuer, world } = api;
    try {
      mockDate(t);
      const seed = noIdentityProvider(issuer.url);
      const withToken = await post(app, '/assign', { node: 'box', module: 'postgres' }, 'a.b.c');
      assert.deepEqual(
        [withToken.status, withToken.body],
        [401, { refused: seed, code: 'unauthorized' }],
      );
      assert.equal(
        withToken.challenge,
        `Bearer realm="berth", error="invalid_token", error_description="${seed}"`,
      );
      const without = await post(app, '/assign', { node: 'box', module: 'postgres' });
      assert.deepEqual(
        [without.status, without.body],
        [401, { refused: seed, code: 'unauthorized' }],
      );
      assert.equal(without.challenge, 'Bearer realm="berth"');
      assert.match(said.join('\n'), /cannot be used: .*openid-configuration cannot be fetched/);

      await issuer.up();
      const token = await api.token();
      t.mock.timers.tick(retryMs - 1);
      const soon = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.equal(soon.body.refused, seed, 'the retry cooldown let a request through early');
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 0);
      t.mock.timers.tick(1);
      const later = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.deepEqual([later.status, later.body.said], [200, 'box is to run postgres']);
      assert.match(said.at(-1) ?? '', /verifying tokens from .* with the keys at /);
      assert.deepEqual(
        (await world.journal()).map((act) => act.actor),
        [SUBJECT],
        'only the accepted request was journaled',
      );
    } finally {
      await api.close();
    }
  });

  for (const behaviour of ['hang', 'not-json', 'wrong-issuer'] as const) {
    it(`answers that it cannot yet verify a token when the issuer answers ${behaviour}, and a flood asks it once`, async () => {
      const said: string[] = [];
      const api = await apiWorld({
        modules: { postgres: POSTGRES },
        inProcess: {
          timing: { fetchTimeoutMs: 200, retryMs: 60_000 },
          log: (line) => said.push(line),
        },
      });
      const { app, issuer, world } = api;
      issuer.behaviour = behaviour;
      try {
        const before = await snapshot(world.state);
        const token = await api.token();
        const answers = await Promise.all(
          Array.from({ length: 40 }, () =>
            post(app, '/assign', { node: 'box', module: 'postgres' }, token),
          ),
        );
        for (const answer of answers)
          assert.deepEqual(
            [answer.status, answer.body],
            [401, { refused: noIdentityProvider(issuer.url), code: 'unauthorized' }],
          );
        assert.equal(issuer.hits('/.well-known/openid-configuration'), 1);
        // Unreachable or too slow is the host, not the path: RFC 8414's form is asked only after an answer.
        const fallback = behaviour === 'hang' ? 0 : 1;
        assert.equal(issuer.hits('/.well-known/oauth-authorization-server'), fallback);
        assert.equal(said.length, 1, said.join('\n'));
        const why = {
          hang: /timed out/,
          'not-json': /did not answer JSON/,
          'wrong-issuer': /names issuer ".*\/elsewhere", not /,
        }[behaviour];
        assert.match(said[0] ?? '', why);
        assert.deepEqual(await snapshot(world.state), before);
      } finally {
        await api.close();
      }
    });
  }

  it('tries the issuer again once per cooldown, however many requests come', async (t) => {
    const retryMs = 300;
    const api = await apiWorld({ inProcess: { timing: { retryMs } } });
    const { app, issuer } = api;
    issuer.behaviour = 'not-json';
    try {
      mockDate(t);
      const token = await api.token();
      const burst = () =>
        Promise.all(Array.from({ length: 20 }, () => post(app, '/adopt', { node: 'box' }, token)));
      await burst();
      t.mock.timers.tick(retryMs - 1);
      await burst();
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 1);
      t.mock.timers.tick(1);
      await burst();
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 2);
    } finally {
      await api.close();
    }
  });
});

describe('finding the issuer and its keys', () => {
  it('puts the well-known paths where OpenID Connect Discovery and RFC 8414 put them', () => {
    const forms = (issuer: string) => metadataUrls(new URL(issuer)).map(String);
    assert.deepEqual(forms('https://id.example.org'), [
      'https://id.example.org/.well-known/openid-configuration',
      'https://id.example.org/.well-known/oauth-authorization-server',
    ]);
    assert.deepEqual(forms('https://id.example.org/realms/ops/'), [
      'https://id.example.org/realms/ops/.well-known/openid-configuration',
      'https://id.example.org/.well-known/oauth-authorization-server/realms/ops',
    ]);
  });

  it('believes only https issuers, or plain http on loopback', () => {
    for (const good of [
      'https://id.example.org/realms/ops',
      'http://127.0.0.1:8080',
      'http://127.9.0.1',
      'http://[::1]:8080/realms/ops',
      'http://localhost:8080',
    ])
      assert.equal(unusableIssuer(good), undefined, good);
    for (const bad of [
      'http://id.example.org',
      'http://10.0.0.1',
      'http://localhost.example.org',
      'ftp://id.example.org',
      'id.example.org',
      'https://id.example.org?realm=ops',
      ' https://id.example.org',
    ])
      assert.ok(unusableIssuer(bad), bad);
  });

  it('finds an issuer with a path by RFC 8414 when it has no OpenID Connect document', async () => {
    const api = await apiWorld({
      issuer: { path: '/realms/ops', discovery: 'oauth' },
      inProcess: {},
    });
    const { app, issuer } = api;
    try {
      const answer = await post(app, '/adopt', { node: 'box' }, await api.token());
      assert.equal(answer.status, 200, answer.body.refused);
      assert.equal(issuer.hits('/realms/ops/.well-known/openid-configuration'), 1);
      assert.equal(issuer.hits('/.well-known/oauth-authorization-server/realms/ops'), 1);
    } finally {
      await api.close();
    }
  });

  it('takes a key the issuer rotates in once the cooldown has passed, in one fetch', async (t) => {
    const keyCooldownMs = 1_000;
    const api = await apiWorld({ inProcess: { timing: { keyCooldownMs } } });
    const { app, issuer } = api;
    try {
      mockDate(t);
      const rotated = await makeKey('key-2');
      const early = await issuer.token({}, rotated);
      assert.equal((await post(app, '/adopt', { node: 'box' }, await api.token())).status, 200);
      issuer.published.push(rotated);
      t.mock.timers.tick(keyCooldownMs - 1);
      const refused = await post(app, '/adopt', { node: 'box' }, early);
      assert.equal(refused.status, 401, 'within the cooldown the new key is not fetched');
      assert.equal(issuer.hits(issuer.jwksPath), 1);
      t.mock.timers.tick(1);
      const tokens = await Promise.all(
        Array.from({ length: 20 }, (_, index) => issuer.token({ sub: `s${index}` }, rotated)),
      );
      const answers = await Promise.all(tokens.map((t) => post(app, '/adopt', { node: 'box' }, t)));
      assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]));
      assert.equal(issuer.hits(issuer.jwksPath), 2);
    } finally {
      await api.close();
    }
  });

  it('trusts a key the issuer replaced under the same kid at once, in one fetch, and refuses the replaced one', async (t) => {
    const keyCooldownMs = 400;
    const api = await apiWorld({ inProcess: { timing: { keyCooldownMs } } });
    const { app, issuer } = api;
    try {
      mockDate(t);
      const replaced = issuer.published[0] as SigningKey;
      assert.equal((await post(app, '/adopt', { node: 'box' }, await api.token())).status, 200);
      assert.equal(issuer.hits(issuer.jwksPath), 1);
      t.mock.timers.tick(keyCooldownMs);
      // The issuer rotates: a new key, published under the kid the old one had.
      const rotated = await makeKey(replaced.kid);
      issuer.published = [rotated];
      const accepted = await post(app, '/adopt', { node: 'box' }, await issuer.token({}, rotated));
      assert.equal(accepted.status, 200, accepted.body.refused);
      assert.equal(issuer.hits(issuer.jwksPath), 2, 'one fetch of the keys anew');
      const old = await post(app, '/adopt', { node: 'box' }, await issuer.token({}, replaced));
      assert.equal(old.status, 401);
      assert.equal(
        old.body.refused,
        `the token's signature does not verify with the keys of ${issuer.url}`,
      );
      assert.equal(issuer.hits(issuer.jwksPath), 2, 'within the cooldown, no fetch');
    } finally {
      await api.close();
    }
  });

  it('fetches the keys at most once a cooldown for tokens whose signatures fail, however many come', async (t) => {
    const keyCooldownMs = 400;
    const api = await apiWorld({ inProcess: { timing: { keyCooldownMs } } });
    const { app, issuer } = api;
    try {
      mockDate(t);
      const good = await api.token();
      assert.equal((await post(app, '/adopt', { node: 'box' }, good)).status, 200);
      t.mock.timers.tick(keyCooldownMs);
      // A flood of forged signatures under the kid berth knows: one fetch, then none.
      const forged = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          issuer.token({ sub: `s${index}` }).then(flipSignatureByte),
        ),
      );
      for (const batch of [forged.slice(0, 10), forged.slice(10)]) {
        const answers = await Promise.all(
          batch.map((token) => post(app, '/adopt', { node: 'box' }, token)),
        );
        assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([401]));
      }
      assert.equal(issuer.hits(issuer.jwksPath), 2);
      t.mock.timers.tick(keyCooldownMs);
      await post(app, '/adopt', { node: 'box' }, forged[0] as string);
      await post(app, '/adopt', { node: 'box' }, forged[1] as string);
      assert.equal(issuer.hits(issuer.jwksPath), 3, 'once more a cooldown later');
      assert.equal((await post(app, '/adopt', { node: 'box' }, good)).status, 200);
    } finally {
      await api.close();
    }
  });

  it('refuses a key the issuer removed once it has fetched its keys anew', async (t) => {
    const keyCooldownMs = 400;
    const api = await apiWorld({ inProcess: { timing: { keyCooldownMs } } });
    const { app, issuer } = api;
    try {
      mockDate(t);
      const removed = await makeKey('key-old', 'ES256');
      issuer.published.push(removed);
      assert.equal(
        (await post(app, '/adopt', { node: 'box' }, await issuer.token({}, removed))).status,
        200,
      );
      t.mock.timers.tick(keyCooldownMs);
      // The issuer drops that key and signs with a new one, under a new kid.
      const fresh = await makeKey('key-new', 'ES256');
      issuer.published = [issuer.published[0] as SigningKey, fresh];
      assert.equal(
        (await post(app, '/adopt', { node: 'box' }, await issuer.token({}, fresh))).status,
        200,
      );
      const refused = await post(app, '/adopt', { node: 'box' }, await issuer.token({}, removed));
      assert.equal(refused.status, 401);
      assert.equal(
        refused.body.refused,
        `the token is signed with a key that ${issuer.url} does not publish`,
      );
    } finally {
      await api.close();
    }
  });
});

describe('berth api, the real process', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  after(() => world.cleanup());

  /** A POST to `served` with `token` (none when null), as a client sees the answer. */
  const postTo = async (
    served: ServedApiWorld,
    path: string,
    json: unknown,
    token: string | null,
  ) => {
    const answer = await served.ask(path, json, { token });
    const challenge = answer.headers['www-authenticate'];
    return {
      status: answer.status,
      body: (answer.body ?? {}) as Record<string, string>,
      challenge: typeof challenge === 'string' ? challenge : null,
    };
  };
  /** SIGTERM, as an operator stops it: it ends with 0; then nothing of it is left. */
  const stopped = async (served: ServedApiWorld) => {
    assert.equal((await served.end()).code, 0, served.api.stderr());
    await served.close();
  };

  it('accepts a token from its issuer, refuses others, and journals the subject', async () => {
    const api = await apiWorld({ world });
    try {
      const token = await api.issuer.token({ sub: 'ops-robot' });
      const done = await postTo(api, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.deepEqual([done.status, done.body.said], [200, 'box is to run postgres']);
      const none = await postTo(api, '/assign', { node: 'box', module: 'postgres' }, null);
      assert.deepEqual([none.status, none.challenge], [401, 'Bearer realm="berth"']);
      const expired = await api.issuer.token({ exp: Math.floor(Date.now() / 1000) - 60 });
      const late = await postTo(api, '/unassign', { node: 'box', module: 'postgres' }, expired);
      assert.equal(late.status, 401);
      assert.match(
        late.challenge ?? '',
        /error="invalid_token", error_description="the token has expired/,
      );

      const log = await world.berth('log', '--json');
      assert.match(log.stdout, /"actor":\s*"ops-robot"/);
      const acts = await world.journal();
      assert.deepEqual(
        acts.map((act) => [act.act, act.actor, act.via]),
        [['assign', 'ops-robot', 'api']],
      );
    } finally {
      await stopped(api);
    }
  });

  it('refuses a token whose subject holds a line break or another control character', async () => {
    const api = await apiWorld({ world });
    const refused =
      "the token's subject (sub) holds a line break or another control character; berth will not journal it as who acts";
    try {
      const journaled = (await world.journal()).length;
      const subjects = [
        'mallory\n2026-01-01T00:00:00.000Z root (cli) adopt box: done',
        'mallory\r',
        'a\tb',
        'a\u0000b',
        'a\u001b[2Kb',
        'a\u007fb',
        'a\u0085b',
        'a\u2028b',
        'a\u202eb',
      ];
      for (const sub of subjects) {
        const answer = await postTo(
          api,
          '/adopt',
          { node: 'box' },
          await api.issuer.token({ sub }),
        );
        assert.equal(answer.status, 401, JSON.stringify(sub));
        assert.deepEqual(answer.body, { refused, code: 'unauthorized' });
        assert.equal(
          answer.challenge,
          `Bearer realm="berth", error="invalid_token", error_description="${refused}"`,
        );
      }
      assert.equal((await world.journal()).length, journaled, 'nothing was done');
      // Any script is a subject; only characters that break or bend a line are refused.
      const accepted = await postTo(
        api,
        '/adopt',
        { node: 'box' },
        await api.issuer.token({ sub: 'José Ωmega 😀' }),
      );
      assert.equal(accepted.status, 200, accepted.body.refused);
      assert.equal((await world.journal()).at(-1)?.actor, 'José Ωmega 😀');
    } finally {
      await stopped(api);
    }
  });

  it('accepts a token only in canonical base64url: no other spelling of it verifies', async () => {
    const api = await apiWorld({ world });
    const refused =
      'the token is not in canonical base64url (RFC 7515: three parts of A-Z a-z 0-9 - _, without padding or spaces, and no bits set past the last byte)';
    try {
      const journaled = (await world.journal()).length;
      const token = await api.issuer.token();
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      // RS256 signs 256 bytes: 342 characters, whose last holds 4 bits no byte uses.
      assert.equal(signature.length % 4, 2);
      const last = alphabet.indexOf(signature.at(-1) as string);
      const sameBytes = `${signature.slice(0, -1)}${alphabet[last ^ 1]}`;
      const standard = signature.replace(/-/g, '+').replace(/_/g, '/');
      assert.notEqual(standard, signature, 'this signature spells a - or _');
      // Spellings a forgiving decoder (atob) reads as the very bytes signed: refused for that.
      const sameToken: [string, string][] = [
        ['== after the signature', `${token}==`],
        [
          'a tab inside the signature',
          `${header}.${payload}.${signature.slice(0, 9)}\t${signature.slice(9)}`,
        ],
        ['other unused bits in the last character', `${header}.${payload}.${sameBytes}`],
      ];
      for (const [name, spelled] of sameToken) {
        const answer = await postTo(api, '/adopt', { node: 'box' }, spelled);
        assert.equal(answer.status, 401, name);
        assert.deepEqual(answer.body, { refused, code: 'unauthorized' }, name);
        assert.equal(
          answer.challenge,
          `Bearer realm="berth", error="invalid_token", error_description="${refused}"`,
          name,
        );
      }
      // Others, refused for what else is wrong with them.
      const others: [string, string][] = [
        ['= after the signature', `${token}=`],
        ['the standard base64 alphabet', `${header}.${payload}.${standard}`],
        ['== after the header', `${header}==.${payload}.${signature}`],
        [
          'a tab inside the payload',
          `${header}.${payload.slice(0, 9)}\t${payload.slice(9)}.${signature}`,
        ],
      ];
      for (const [name, spelled] of others) {
        const answer = await postTo(api, '/adopt', { node: 'box' }, spelled);
        assert.equal(answer.status, 401, name);
        assert.ok(
          !answer.body.refused?.includes(signature.slice(0, 16)),
          `${name} echoed the token`,
        );
      }
      assert.equal(
        await world.journal().then((acts) => acts.length),
        journaled,
        'nothing was done',
      );
      assert.equal((await postTo(api, '/adopt', { node: 'box' }, token)).status, 200);
    } finally {
      await stopped(api);
    }
  });

  it('holds tokens to --audience', async () => {
    const api = await apiWorld({ world, flags: ['--audience', 'ops'] });
    try {
      const forBerth = await postTo(api, '/adopt', { node: 'box' }, await api.issuer.token());
      assert.equal(forBerth.status, 401);
      assert.equal(forBerth.body.refused, 'the token is for audience berth, not ops');
      const forOps = await postTo(
        api,
        '/adopt',
        { node: 'box' },
        await api.issuer.token({ aud: 'ops' }),
      );
      assert.equal(forOps.status, 200, forOps.body.refused);
    } finally {
      await stopped(api);
    }
  });

  it('notices an issuer that comes up after it started, without a restart', async () => {
    const api = await apiWorld({ world, issuerDown: true });
    try {
      const down = await postTo(api, '/adopt', { node: 'box' }, 'a.b.c');
      assert.deepEqual(
        [down.status, down.body],
        [401, { refused: noIdentityProvider(api.issuer.url), code: 'unauthorized' }],
      );
      await api.issuer.up();
      const token = await api.token();
      // Asked again until it notices: berth api tries the issuer again once its retry
      // cooldown (5 s) is over, real time in the real process; the in-process suite above
      // holds the cooldown to the clock. The bound is against a hang, not a measurement.
      const until = Date.now() + SAFETY_MS;
      let status = 401;
      while (status === 401 && Date.now() < until) {
        status = (await postTo(api, '/adopt', { node: 'box' }, token)).status;
        if (status === 401) await sleep(250);
      }
      assert.equal(status, 200, `not noticed within ${SAFETY_MS} ms`);
      assert.match(api.api.stderr(), /the issuer .* cannot be used: .*cannot be fetched/);
      assert.match(api.api.stderr(), /verifying tokens from .* with the keys at /);
    } finally {
      await stopped(api);
    }
  });

  it('will not start with an issuer it would not believe, or an empty audience', async () => {
    const plain = await runBerth([
      'api',
      '--issuer',
      'http://id.example.org',
      '--state',
      world.state,
    ]);
    assert.equal(plain.code, 2);
    assert.match(plain.stderr, /berth believes tokens only from an https issuer/);
    assert.equal(plain.stdout, '');
    const empty = await runBerth([
      'api',
      '--issuer',
      'https://id.example.org',
      '--audience',
      ' ',
      '--state',
      world.state,
    ]);
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /--audience .* cannot be empty/);
  });
});
