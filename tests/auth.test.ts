import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileDeps } from '../src/cli/deps.ts';
import { routes } from '../src/commands/table.ts';
import { locateState } from '../src/config/state-dir.ts';
import { createApp } from '../src/http/app.ts';
import { type Authenticator, noIdentityProvider } from '../src/http/authenticator.ts';
import {
  issuerAuthenticator,
  metadataUrls,
  type Timing,
  unusableIssuer,
} from '../src/http/issuer-authenticator.ts';
import type { App } from './helpers/api.ts';
import {
  flipSignatureByte,
  freePort,
  hmacWithPublicKey,
  type Issuer,
  makeKey,
  type SigningKey,
  startIssuer,
  unsignedToken,
} from './helpers/issuer.ts';
import { SAFETY_MS } from './helpers/safety.ts';
import { BERTH, makeWorld, POSTGRES, runBerth, type World } from './helpers/world.ts';

const SUBJECT = 'alice@example.org';

/** The app as `berth api` builds it, over a real state directory. */
function appWith(state: string, authenticator: Authenticator): App {
  return createApp({
    routes: routes(),
    authenticator,
    ...fileDeps(locateState(state)),
  });
}

function appFor(
  state: string,
  issuer: string,
  extra: { timing?: Partial<Timing>; log?: (line: string) => void } = {},
): App {
  return appWith(state, issuerAuthenticator({ issuer, audience: 'berth', ...extra }));
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
  let world: World;
  let issuer: Issuer;
  let authenticator: Authenticator;
  let app: App;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    issuer = await startIssuer();
    // Every asymmetric family berth accepts, published before berth first fetches the keys.
    for (const [kid, alg] of [
      ['ec', 'ES256'],
      ['ed', 'EdDSA'],
      ['ps', 'PS256'],
    ] as const)
      issuer.published.push(await makeKey(kid, alg));
    authenticator = issuerAuthenticator({ issuer: issuer.url, audience: 'berth' });
    app = appWith(world.state, authenticator);
  });
  after(async () => {
    await issuer.close();
    await world.cleanup();
  });

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

    const nowhere = appWith(join(world.dir, 'no-such-state'), authenticator);
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
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  after(() => world.cleanup());

  it('answers that it cannot yet verify a token while the issuer is down, and notices it coming up without a restart', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const said: string[] = [];
    // The cooldown outlasts starting an issuer and minting a token on a busy machine.
    const app = appFor(world.state, url, { timing: { retryMs: 3_000 }, log: (l) => said.push(l) });
    const seed = noIdentityProvider(url);

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

    const issuer = await startIssuer({ port });
    try {
      const token = await issuer.token();
      const soon = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.equal(soon.body.refused, seed, 'the retry cooldown let a request through at once');
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 0);
      await sleep(3_100);
      const later = await post(app, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.deepEqual([later.status, later.body.said], [200, 'box is to run postgres']);
      assert.match(said.at(-1) ?? '', /verifying tokens from .* with the keys at /);
    } finally {
      await issuer.close();
    }
    assert.deepEqual(
      (await world.journal()).map((act) => act.actor),
      [SUBJECT],
      'only the accepted request was journaled',
    );
  });

  for (const behaviour of ['hang', 'not-json', 'wrong-issuer'] as const) {
    it(`answers that it cannot yet verify a token when the issuer answers ${behaviour}, and a flood asks it once`, async () => {
      const issuer = await startIssuer();
      issuer.behaviour = behaviour;
      const said: string[] = [];
      const app = appFor(world.state, issuer.url, {
        timing: { fetchTimeoutMs: 200, retryMs: 60_000 },
        log: (line) => said.push(line),
      });
      try {
        const before = await snapshot(world.state);
        const token = await issuer.token();
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
        await issuer.close();
      }
    });
  }

  it('tries the issuer again once per cooldown, however many requests come', async () => {
    const issuer = await startIssuer();
    issuer.behaviour = 'not-json';
    const app = appFor(world.state, issuer.url, { timing: { retryMs: 300 } });
    try {
      const token = await issuer.token();
      const burst = () =>
        Promise.all(Array.from({ length: 20 }, () => post(app, '/adopt', { node: 'box' }, token)));
      await burst();
      await burst();
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 1);
      await sleep(350);
      await burst();
      assert.equal(issuer.hits('/.well-known/openid-configuration'), 2);
    } finally {
      await issuer.close();
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
    const issuer = await startIssuer({ path: '/realms/ops', discovery: 'oauth' });
    const world = await makeWorld();
    try {
      const app = appFor(world.state, issuer.url);
      const answer = await post(app, '/adopt', { node: 'box' }, await issuer.token());
      assert.equal(answer.status, 200, answer.body.refused);
      assert.equal(issuer.hits('/realms/ops/.well-known/openid-configuration'), 1);
      assert.equal(issuer.hits('/.well-known/oauth-authorization-server/realms/ops'), 1);
    } finally {
      await issuer.close();
      await world.cleanup();
    }
  });

  it('takes a key the issuer rotates in once the cooldown has passed, in one fetch', async () => {
    const issuer = await startIssuer();
    const world = await makeWorld();
    try {
      const app = appFor(world.state, issuer.url, { timing: { keyCooldownMs: 1_000 } });
      const rotated = await makeKey('key-2');
      const early = await issuer.token({}, rotated);
      assert.equal((await post(app, '/adopt', { node: 'box' }, await issuer.token())).status, 200);
      issuer.published.push(rotated);
      const refused = await post(app, '/adopt', { node: 'box' }, early);
      assert.equal(refused.status, 401, 'within the cooldown the new key is not fetched');
      assert.equal(issuer.hits(issuer.jwksPath), 1);
      await sleep(1_050);
      const tokens = await Promise.all(
        Array.from({ length: 20 }, (_, index) => issuer.token({ sub: `s${index}` }, rotated)),
      );
      const answers = await Promise.all(tokens.map((t) => post(app, '/adopt', { node: 'box' }, t)));
      assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([200]));
      assert.equal(issuer.hits(issuer.jwksPath), 2);
    } finally {
      await issuer.close();
      await world.cleanup();
    }
  });

  it('trusts a key the issuer replaced under the same kid at once, in one fetch, and refuses the replaced one', async () => {
    const issuer = await startIssuer();
    const world = await makeWorld();
    try {
      const app = appFor(world.state, issuer.url, { timing: { keyCooldownMs: 400 } });
      const replaced = issuer.published[0] as SigningKey;
      assert.equal((await post(app, '/adopt', { node: 'box' }, await issuer.token())).status, 200);
      assert.equal(issuer.hits(issuer.jwksPath), 1);
      await sleep(450);
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
      await issuer.close();
      await world.cleanup();
    }
  });

  it('fetches the keys at most once a cooldown for tokens whose signatures fail, however many come', async () => {
    const issuer = await startIssuer();
    const world = await makeWorld();
    try {
      const app = appFor(world.state, issuer.url, { timing: { keyCooldownMs: 400 } });
      const good = await issuer.token();
      assert.equal((await post(app, '/adopt', { node: 'box' }, good)).status, 200);
      await sleep(450);
      // A flood of forged signatures under the kid berth knows: one fetch, then none.
      const forged = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          issuer.token({ sub: `s${index}` }).then(flipSignatureByte),
        ),
      );
      for (const batch of [forged.slice(0, 10), forged.slice(10)]) {
        const answers = await Promise.all(
          batch.map((t) => post(app, '/adopt', { node: 'box' }, t)),
        );
        assert.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([401]));
      }
      assert.equal(issuer.hits(issuer.jwksPath), 2);
      await sleep(450);
      await post(app, '/adopt', { node: 'box' }, forged[0] as string);
      await post(app, '/adopt', { node: 'box' }, forged[1] as string);
      assert.equal(issuer.hits(issuer.jwksPath), 3, 'once more a cooldown later');
      assert.equal((await post(app, '/adopt', { node: 'box' }, good)).status, 200);
    } finally {
      await issuer.close();
      await world.cleanup();
    }
  });

  it('refuses a key the issuer removed once it has fetched its keys anew', async () => {
    const issuer = await startIssuer();
    const world = await makeWorld();
    try {
      const app = appFor(world.state, issuer.url, { timing: { keyCooldownMs: 400 } });
      const removed = await makeKey('key-old', 'ES256');
      issuer.published.push(removed);
      assert.equal(
        (await post(app, '/adopt', { node: 'box' }, await issuer.token({}, removed))).status,
        200,
      );
      await sleep(450);
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
      await issuer.close();
      await world.cleanup();
    }
  });
});

/** `berth api` as a user starts it; resolves once it has said where it serves. */
async function startApi(
  args: string[],
): Promise<{ url: string; child: ChildProcess; stderr: () => string; exit: Promise<number> }> {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...env } = process.env;
  const child = spawn(process.execPath, [BERTH, 'api', '--listen', '127.0.0.1:0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const exit = new Promise<number>((done) => child.once('exit', (code) => done(code ?? -1)));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const first = await new Promise<string>((done, fail) => {
    lines.once('line', done);
    child.once('exit', () => fail(new Error(`berth api ended: ${stderr}`)));
  });
  const url = /^serving (http:\/\/127\.0\.0\.1:\d+)$/.exec(first)?.[1];
  assert.ok(url, first);
  return { url, child, stderr: () => stderr, exit };
}

async function postTo(url: string, path: string, json: unknown, token?: string) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: JSON.stringify(json),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, string>,
    challenge: response.headers.get('www-authenticate'),
  };
}

describe('berth api, the real process', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  after(() => world.cleanup());

  it('accepts a token from its issuer, refuses others, and journals the subject', async () => {
    const issuer = await startIssuer();
    const api = await startApi(['--issuer', issuer.url, '--state', world.state]);
    try {
      const token = await issuer.token({ sub: 'ops-robot' });
      const done = await postTo(api.url, '/assign', { node: 'box', module: 'postgres' }, token);
      assert.deepEqual([done.status, done.body.said], [200, 'box is to run postgres']);
      const none = await postTo(api.url, '/assign', { node: 'box', module: 'postgres' });
      assert.deepEqual([none.status, none.challenge], [401, 'Bearer realm="berth"']);
      const expired = await issuer.token({ exp: Math.floor(Date.now() / 1000) - 60 });
      const late = await postTo(api.url, '/unassign', { node: 'box', module: 'postgres' }, expired);
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
      api.child.kill('SIGTERM');
      assert.equal(await api.exit, 0);
      await issuer.close();
    }
  });

  it('refuses a token whose subject holds a line break or another control character', async () => {
    const issuer = await startIssuer();
    const api = await startApi(['--issuer', issuer.url, '--state', world.state]);
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
          api.url,
          '/adopt',
          { node: 'box' },
          await issuer.token({ sub }),
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
        api.url,
        '/adopt',
        { node: 'box' },
        await issuer.token({ sub: 'José Ωmega 😀' }),
      );
      assert.equal(accepted.status, 200, accepted.body.refused);
      assert.equal((await world.journal()).at(-1)?.actor, 'José Ωmega 😀');
    } finally {
      api.child.kill('SIGTERM');
      assert.equal(await api.exit, 0);
      await issuer.close();
    }
  });

  it('accepts a token only in canonical base64url: no other spelling of it verifies', async () => {
    const issuer = await startIssuer();
    const api = await startApi(['--issuer', issuer.url, '--state', world.state]);
    const refused =
      'the token is not in canonical base64url (RFC 7515: three parts of A-Z a-z 0-9 - _, without padding or spaces, and no bits set past the last byte)';
    try {
      const journaled = (await world.journal()).length;
      const token = await issuer.token();
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
        const answer = await postTo(api.url, '/adopt', { node: 'box' }, spelled);
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
        const answer = await postTo(api.url, '/adopt', { node: 'box' }, spelled);
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
      assert.equal((await postTo(api.url, '/adopt', { node: 'box' }, token)).status, 200);
    } finally {
      api.child.kill('SIGTERM');
      assert.equal(await api.exit, 0);
      await issuer.close();
    }
  });

  it('holds tokens to --audience', async () => {
    const issuer = await startIssuer();
    const api = await startApi([
      '--issuer',
      issuer.url,
      '--audience',
      'ops',
      '--state',
      world.state,
    ]);
    try {
      const forBerth = await postTo(api.url, '/adopt', { node: 'box' }, await issuer.token());
      assert.equal(forBerth.status, 401);
      assert.equal(forBerth.body.refused, 'the token is for audience berth, not ops');
      const forOps = await postTo(
        api.url,
        '/adopt',
        { node: 'box' },
        await issuer.token({ aud: 'ops' }),
      );
      assert.equal(forOps.status, 200, forOps.body.refused);
    } finally {
      api.child.kill('SIGTERM');
      assert.equal(await api.exit, 0);
      await issuer.close();
    }
  });

  it('notices an issuer that comes up after it started, without a restart', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const api = await startApi(['--issuer', url, '--state', world.state]);
    let issuer: Issuer | undefined;
    try {
      const down = await postTo(api.url, '/adopt', { node: 'box' }, 'a.b.c');
      assert.deepEqual(
        [down.status, down.body],
        [401, { refused: noIdentityProvider(url), code: 'unauthorized' }],
      );
      issuer = await startIssuer({ port });
      const token = await issuer.token();
      // Asked again until it notices; the bound is against a hang, not a measurement.
      const until = Date.now() + SAFETY_MS;
      let status = 401;
      while (status === 401 && Date.now() < until) {
        status = (await postTo(api.url, '/adopt', { node: 'box' }, token)).status;
        if (status === 401) await sleep(250);
      }
      assert.equal(status, 200, `not noticed within ${SAFETY_MS} ms`);
      assert.match(api.stderr(), /the issuer .* cannot be used: .*cannot be fetched/);
      assert.match(api.stderr(), /verifying tokens from .* with the keys at /);
    } finally {
      api.child.kill('SIGTERM');
      assert.equal(await api.exit, 0);
      await issuer?.close();
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
