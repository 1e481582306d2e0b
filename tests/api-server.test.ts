import assert from 'node:assert/strict';
import { access, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { noIdentityProvider } from '../src/http/authenticator.ts';
import { CLOSE_ALL_MS, listen } from '../src/http/serve.ts';
import { appOver, noRoute } from './helpers/api.ts';
import {
  type ApiProcess,
  dripHeaders,
  httpAsk,
  parseRaw,
  runApiExpectingEnd,
} from './helpers/api-process.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { rawExchange } from './helpers/reliability.ts';
import { SAFETY_MS, until } from './helpers/safety.ts';
import { digestOf, makeWorld, type World } from './helpers/world.ts';

/** Nothing listens on port 9 (discard): no identity provider is running there. */
const ISSUER = 'http://127.0.0.1:9/';
const NO_ISSUER =
  'berth api will not run without being told whose tokens to believe: give --issuer, the URL of the OAuth 2.0 issuer';

/** Lets the event loop go round, for what a socket did a moment ago to be seen. */
async function turns() {
  for (let i = 0; i < 10; i++) await new Promise((done) => setImmediate(done));
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Whether this machine lets a server listen on `host`. */
function canBind(host: string): Promise<boolean> {
  const server = createServer();
  return new Promise((done) => {
    server.once('error', () => done(false));
    server.listen(0, host, () => server.close(() => done(true)));
  });
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return httpAsk(`http://127.0.0.1:${port}`, { method: 'GET', path: '/' }).then(
    () => true,
    () => false,
  );
}

describe('berth api, the real process over a real socket', () => {
  let served: ServedApiWorld;
  let api: ApiProcess;
  /** What a route is answered while its identity provider is not running. */
  let NO_IDENTITY_PROVIDER: string;
  before(async () => {
    served = await apiWorld({ issuerDown: true });
    api = served.api;
    NO_IDENTITY_PROVIDER = noIdentityProvider(served.issuer.url);
  });
  after(() => served?.close());

  it('prints the three start lines, the first with the port it bound', () => {
    assert.match(api.lines[0] ?? '', /^serving http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(api.port, 0);
    assert.deepEqual(api.lines.slice(1), [
      `accepting tokens from ${served.issuer.url}`,
      'every route calls what the command line calls',
    ]);
  });

  it('answers a route without a token 401 in words, with a Bearer challenge', async () => {
    const answer = await httpAsk(api.url, {
      path: '/assign',
      body: JSON.stringify({ node: 'box', module: 'postgres' }),
      headers: { 'Content-Type': 'application/json' },
    });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.deepEqual(answer.body, { refused: NO_IDENTITY_PROVIDER, code: 'unauthorized' });
    assert.equal(answer.headers['www-authenticate'], 'Bearer realm="berth"');
  });

  it('answers a route with a token 401 with an invalid_token challenge', async () => {
    const answer = await httpAsk(api.url, {
      path: '/converge',
      body: JSON.stringify({ node: 'box' }),
      headers: { Authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln' },
    });
    assert.equal(answer.status, 401);
    assert.deepEqual(answer.body, { refused: NO_IDENTITY_PROVIDER, code: 'unauthorized' });
    assert.equal(
      answer.headers['www-authenticate'],
      `Bearer realm="berth", error="invalid_token", error_description="${NO_IDENTITY_PROVIDER}"`,
    );
  });

  it('answers an unauthenticated body declared over 64 KiB 401, not 413', async () => {
    const answer = await httpAsk(api.url, {
      path: '/assign',
      body: JSON.stringify({ node: 'box', pad: 'x'.repeat(70 * 1024) }),
    });
    assert.equal(answer.status, 401);
    assert.deepEqual(answer.body, { refused: NO_IDENTITY_PROVIDER, code: 'unauthorized' });
  });

  it('answers another method or path 404, with or without credentials', async () => {
    const asked: [string, string, Record<string, string>][] = [
      ['GET', '/assign', {}],
      ['PUT', '/take', { Authorization: 'Bearer abc.def.ghi' }],
      ['POST', '/nope', {}],
      ['POST', '/assign/', { Authorization: 'Bearer abc.def.ghi' }],
    ];
    for (const [method, path, headers] of asked) {
      const answer = await httpAsk(api.url, { method, path, headers, body: '{}' });
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(answer.headers['content-type'], 'application/json');
      assert.deepEqual(answer.body, { refused: noRoute(method, path), code: 'no_route' });
    }
  });

  it('answers every odd request the app is handed in full, as the app says it: the 401 while no identity provider answers, or its 404', async () => {
    const body = '{"node":"box","module":"m"}';
    const send = (line: string, headers: string[] = [], host = 'Host: 127.0.0.1') =>
      [line, ...(host ? [host] : []), ...headers, `Content-Length: ${body.length}`, '', body].join(
        '\r\n',
      );
    const answerOf = (status: string, headers: string[], json: string) =>
      [
        `HTTP/1.1 ${status}`,
        ...headers,
        'Date: -',
        'Connection: keep-alive',
        'Keep-Alive: timeout=5',
        `Content-Length: ${Buffer.byteLength(json)}`,
        '',
        json,
      ].join('\r\n');
    const refused = JSON.stringify({ refused: NO_IDENTITY_PROVIDER, code: 'unauthorized' });
    const seed = (challenge: string) =>
      answerOf(
        '401 Unauthorized',
        ['Content-Type: application/json', `WWW-Authenticate: ${challenge}`],
        refused,
      );
    const withToken = seed(
      `Bearer realm="berth", error="invalid_token", error_description="${NO_IDENTITY_PROVIDER}"`,
    );
    const withoutToken = seed('Bearer realm="berth"');
    const notFound = (method: string, path: string) =>
      answerOf(
        '404 Not Found',
        ['Content-Type: application/json'],
        JSON.stringify({ refused: noRoute(method, path), code: 'no_route' }),
      );
    const token = 'Authorization: Bearer not.a.token';
    const cases: [bytes: string, answer: string][] = [];
    for (const route of ['/assign', '/unassign', '/take', '/converge', '/adopt'])
      cases.push(
        [send(`POST ${route} HTTP/1.1`, [token]), withToken],
        [send(`POST ${route} HTTP/1.1`), withoutToken],
        [send(`POST ${route} HTTP/1.1`, ['Authorization: Basic YTpi']), withoutToken],
        [send(`POST ${route} HTTP/1.1`, ['Authorization: \t Bearer not.a.token \t ']), withToken],
        [send(`POST ${route} HTTP/1.1`, ['authorization: bearer x']), withToken],
        // A Request joins two Authorization headers: "Bearer a, Bearer b" carries no token.
        [send(`POST ${route} HTTP/1.1`, [token, 'Authorization: Bearer b']), withoutToken],
      );
    // What the URL parser makes of a target is the route asked for.
    for (const target of [
      '/assign?x=1',
      '/assign?access_token=a',
      '/assign?',
      '/assign#x',
      '/%61ssign',
      '/a/../assign',
      '/%2e%2e/assign',
      'http://127.0.0.1/assign',
      'http://other.example:9/take?q',
    ])
      cases.push([send(`POST ${target} HTTP/1.1`, [token]), withToken]);
    for (const host of ['Example.com', 'localhost:8081', '[::1]:80', 'a:1'])
      cases.push(
        [send('POST /assign HTTP/1.1', [token], `Host: ${host}`), withToken],
        [send('POST /nope HTTP/1.1', [token], `Host: ${host}`), notFound('POST', '/nope')],
      );
    for (const [method, target, named] of [
      ['POST', '/nope', '/nope'],
      ['GET', '/', '/'],
      ['GET', '/assign', '/assign'],
      ['POST', '/assign/', '/assign/'],
      ['POST', '/Assign', '/Assign'],
      ['POST', '//assign', '//assign'],
      ['POST', '/assign%2F', '/assign%2F'],
      ['POST', '/a"b', '/a%22b'],
      ['POST', '/{x}', '/%7Bx%7D'],
      ['GET', '/%zz', '/%zz'],
      ['PUT', "/A-Z_a.z~!$&'()*+,;=:@[]/0-9//x", "/A-Z_a.z~!$&'()*+,;=:@[]/0-9//x"],
      ['DELETE', '/a/.b/..c', '/a/.b/..c'],
      ['DELETE', '/nodes/web1', '/nodes/web1'],
      ['PATCH', '/x', '/x'],
      ['OPTIONS', '/x', '/x'],
      ['OPTIONS', '/a%20b', '/a%20b'],
      ['TRACE', '/nope', '/nope'],
    ] as const)
      for (const headers of [[token], []])
        cases.push([send(`${method} ${target} HTTP/1.1`, headers), notFound(method, named)]);
    for (const [bytes, expected] of cases) {
      const answer = await rawExchange(api.port, bytes);
      const undated = answer.raw.replace(/\r\nDate: [^\r]*/, '\r\nDate: -');
      assert.equal(undated, expected, bytes.split('\r\n').slice(0, 3).join(' | '));
    }
    // A HEAD is answered as a GET is, without the body: no route answers GET.
    for (const target of ['/assign', '/nope']) {
      const head = await rawExchange(api.port, send(`HEAD ${target} HTTP/1.1`, [token]), {
        head: true,
      });
      assert.equal(head.status, 404, head.raw);
      assert.equal(head.headers['content-type'], 'application/json');
      assert.equal(head.body, '');
    }
    // HTTP/1.0 came before Host: its request is the app's, and its connection closes.
    for (const [line, status, json] of [
      ['POST /assign HTTP/1.0', 401, refused],
      [
        'GET /nope HTTP/1.0',
        404,
        JSON.stringify({ refused: noRoute('GET', '/nope'), code: 'no_route' }),
      ],
    ] as const) {
      const old = await rawExchange(api.port, send(line, [token], ''));
      assert.equal(old.status, status, old.raw);
      assert.equal(old.headers.connection, 'close');
      assert.equal(old.body, json);
    }
  });

  it('cuts a client that drips its headers at its 10 s deadline, serving others meanwhile', async () => {
    const dripping = dripHeaders(
      api.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      (n) => `X-Drip-${n}: still coming\r\n`,
    );
    let cut = false;
    void dripping.cut.then(() => {
      cut = true;
    });
    // The deadline is real time in the real process: the 10 s are waited for, once.
    await dripping.begun;
    const other = await httpAsk(api.url, { method: 'GET', path: '/assign' });
    assert.equal(other.status, 404);
    assert.equal(cut, false, 'the dripping client was cut before the other was served');

    const { raw } = await dripping.cut;
    const answer = parseRaw(raw);
    assert.equal(answer.status, 408, raw);
    assert.equal(answer.headers['content-type'], 'application/json', raw);
    assert.match(String(JSON.parse(answer.body).refused), /headers within 10 s/);
  });
});

describe('berth api on an IPv6 loopback', () => {
  it('serves [::1] and names it in brackets', async (t) => {
    if (!(await canBind('::1'))) return t.skip('this machine has no IPv6 loopback');
    const served = await apiWorld({ issuerDown: true, listen: '[::1]:0' });
    try {
      assert.match(served.api.lines[0] ?? '', /^serving http:\/\/\[::1\]:\d+$/);
      const answer = await httpAsk(served.url, { method: 'GET', path: '/nope' });
      assert.equal(answer.status, 404);
      assert.deepEqual(answer.body, { refused: noRoute('GET', '/nope'), code: 'no_route' });
    } finally {
      await served.close();
    }
  });
});

describe('listen(): the body limit over a socket', () => {
  let world: World;
  let served: Awaited<ReturnType<typeof listen>>;
  const stop = new AbortController();
  before(async () => {
    world = await makeWorld();
    served = await listen(
      appOver(world.state).fetch,
      { hostname: '127.0.0.1', port: 0 },
      stop.signal,
    );
  });
  after(async () => {
    stop.abort();
    await served.closed;
    await world.cleanup();
  });

  const body = JSON.stringify({ node: 'box', module: 'postgres', pad: 'x'.repeat(200 * 1024) });
  it('a body declared over 64 KiB is 413', async () => {
    const answer = await httpAsk(served.url, { path: '/assign', body });
    assert.equal(answer.status, 413);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.deepEqual(answer.body, {
      refused: 'the request body is larger than berth reads (64 KiB)',
      code: 'body_too_large',
    });
  });

  it('a body declared far over 64 KiB is answered 413 at once, and the connection closed', async () => {
    const { port } = new URL(served.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
    });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    // 100 MB declared, 1 KB sent: berth answers without waiting for, or reading, the rest.
    socket.write(
      `POST /assign HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n${'x'.repeat(1024)}`,
    );
    await closed;
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.match(received, /\r\nconnection: close\r\n/i);
  });

  it('a chunked body that grows past 64 KiB is 413, and nothing is done', async () => {
    const answer = await httpAsk(served.url, {
      path: '/assign',
      chunks: [body.slice(0, 100), body.slice(100)],
    });
    assert.equal(answer.status, 413);
    assert.deepEqual(answer.body, {
      refused: 'the request body is larger than berth reads (64 KiB)',
      code: 'body_too_large',
    });
    assert.deepEqual(await world.journal(), []);
  });
});

describe('berth api ending', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`ends with 0 soon after ${signal}, though a keep-alive connection is open and idle`, async () => {
      const { api, close } = await apiWorld({ world, issuerDown: true });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const answer = await httpAsk(api.url, { method: 'GET', path: '/', agent });
        assert.equal(answer.status, 404);
        assert.equal(Object.keys(agent.freeSockets).length, 1, 'the connection is kept alive');

        api.child.kill(signal);
        assert.deepEqual(await api.exited, { code: 0, signal: null });
        assert.equal(await listening(api.port), false);
      } finally {
        agent.destroy();
        await close();
      }
    });
  }

  const noIssuer: [string, string[]][] = [
    ['no --issuer', []],
    ['an empty --issuer', ['--issuer', '']],
    ['a blank --issuer', ['--issuer', '   ']],
    ['an empty --issuer=', ['--issuer=']],
  ];
  for (const [what, args] of noIssuer) {
    it(`${what} stops it before it listens, with exit 2 and the words about whose tokens to believe`, async () => {
      const port = await freePort();
      const ended = await runApiExpectingEnd([
        '--listen',
        `127.0.0.1:${port}`,
        '--state',
        world.state,
        ...args,
      ]);
      assert.equal(ended.code, 2, ended.stdout + ended.stderr);
      assert.equal(ended.stderr, `${NO_ISSUER}\n`);
      assert.equal(ended.stdout, '');
      assert.equal(await listening(port), false);
    });
  }

  const listenWords = '--listen takes host:port, like 127.0.0.1:8081 or [::1]:8081';
  const badListen: [string, string][] = [
    ['nope', `${listenWords}, not "nope"`],
    ['127.0.0.1', `${listenWords}, not "127.0.0.1"`],
    ['127.0.0.1:70000', `${listenWords}, not "127.0.0.1:70000"`],
    ['::1:8081', `${listenWords}, not "::1:8081"`],
    // An empty word is one the option parser reads as the number 0 (docs/cli.md).
    [
      '',
      `${listenWords}; the option parser read its value as the number 0, as it reads 007, 1e3, 0x10 or a blank word`,
    ],
  ];
  for (const [listenOn, shown] of badListen) {
    it(`--listen ${JSON.stringify(listenOn)} ends with exit 2 and that error`, async () => {
      const ended = await runApiExpectingEnd([
        '--listen',
        listenOn,
        '--issuer',
        ISSUER,
        '--state',
        world.state,
      ]);
      assert.equal(ended.code, 2, ended.stdout + ended.stderr);
      assert.equal(ended.stderr, `${shown}\n`);
      assert.equal(ended.stdout, '');
    });
  }

  it('an unknown flag ends with exit 2 and names it', async () => {
    const ended = await runApiExpectingEnd(['--issuer', ISSUER, '--lisen', '127.0.0.1:0']);
    assert.equal(ended.code, 2);
    assert.match(ended.stderr, /--lisen/);
    assert.equal(ended.stdout, '');
  });

  it('an address already in use ends it with an error naming the address, not exit 0', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const { port } = taken.address() as { port: number };
    try {
      const ended = await runApiExpectingEnd([
        '--listen',
        `127.0.0.1:${port}`,
        '--issuer',
        ISSUER,
        '--state',
        world.state,
      ]);
      assert.equal(ended.code, 1);
      assert.match(
        ended.stderr,
        new RegExp(`^berth api cannot listen on 127\\.0\\.0\\.1:${port}: `),
      );
      assert.equal(ended.stdout, '');
    } finally {
      await new Promise((done) => taken.close(done));
    }
  });
});

describe('listen(): closing gracefully', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    // Its start hook marks that it has begun, then ends once the test says so.
    await world.writeModule('slow', {
      description: 'a module that starts when the test says',
      start:
        'touch "$BERTH_ROOT/begun"; while [ ! -e "$BERTH_ROOT/go" ]; do sleep 0.05; done; touch "$BERTH_ROOT/started"',
    });
  });
  after(() => world.cleanup());

  const exists = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );

  it('lets a request in flight finish and answer, refuses new connections, then closes', async () => {
    const app = appOver(world.state);
    const stop = new AbortController();
    const served = await listen(app.fetch, { hostname: '127.0.0.1', port: 0 }, stop.signal);
    const agent = new Agent({ keepAlive: true });
    try {
      const ask = (path: string, body: unknown) =>
        httpAsk(served.url, { path, body: JSON.stringify(body), agent });
      assert.equal((await ask('/assign', { node: 'box', module: 'slow' })).status, 200);
      const preview = await ask('/converge', { node: 'box' });
      assert.equal(preview.status, 200, preview.text);
      const digest = digestOf(String(preview.body?.said));
      const act = ask('/converge', { node: 'box', yes: true, digest });
      await until(() => exists(join(world.root, 'begun')), 'the start hook of slow began');

      stop.abort();
      const port = Number(new URL(served.url).port);
      await until(async () => !(await listening(port)), 'the server stopped taking connections');
      await writeFile(join(world.root, 'go'), '');

      const answer = await act;
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers.connection, 'close', 'the answer in flight closes');
      assert.match(String(answer.body?.said), /ran start of slow/);
      assert.ok(await exists(join(world.root, 'started')));

      await served.closed;
    } finally {
      agent.destroy();
      stop.abort();
      await served.closed;
    }
  });

  it('cuts a request still running when the grace is up, within the 5 s', async (t) => {
    let release = () => {};
    const running = new Promise<void>((done) => {
      release = done;
    });
    let begun = () => {};
    const hasBegun = new Promise<void>((done) => {
      begun = done;
    });
    const stop = new AbortController();
    const served = await listen(
      async () => {
        begun();
        await running;
        return new Response('{"said":"too late"}', {
          headers: { 'Content-Type': 'application/json' },
        });
      },
      { hostname: '127.0.0.1', port: 0 },
      stop.signal,
    );
    try {
      const request = httpAsk(served.url, { path: '/adopt', body: '{"node":"box"}' });
      await hasBegun;
      // The server's clock in the test's hands: the cut is when its grace is up, not before.
      t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      stop.abort();
      let cut = false;
      void request.catch(() => {
        cut = true;
      });
      await turns();
      t.mock.timers.tick(CLOSE_ALL_MS - 1);
      await turns();
      assert.equal(cut, false, 'cut before the grace was up');
      t.mock.timers.tick(1);
      await assert.rejects(request, /socket hang up|ECONNRESET/);
      await served.closed;
    } finally {
      release();
      stop.abort();
      await served.closed;
    }
  });

  it('closes at once when the only connections are idle keep-alive ones', {
    timeout: SAFETY_MS,
  }, async (t) => {
    const app = appOver(world.state);
    const stop = new AbortController();
    const served = await listen(app.fetch, { hostname: '127.0.0.1', port: 0 }, stop.signal);
    const agents = [new Agent({ keepAlive: true }), new Agent({ keepAlive: true })];
    try {
      for (const agent of agents) {
        const answer = await httpAsk(served.url, { method: 'GET', path: '/', agent });
        assert.equal(answer.status, 404);
        assert.equal(Object.keys(agent.freeSockets).length, 1, 'the connection is kept alive');
      }
      // With its timers stopped, the close can end only by closing the idle ones itself.
      t.mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      stop.abort();
      await served.closed;
    } finally {
      for (const agent of agents) agent.destroy();
      stop.abort();
      await served.closed;
    }
  });
});
