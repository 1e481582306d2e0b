import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiProcess, httpAsk, startApi, startApiOn } from './helpers/api-process.ts';
import { flipSignatureByte, freePort, type Issuer, startIssuer } from './helpers/issuer.ts';
import { makeWorld, type World } from './helpers/world.ts';

interface Line {
  time: string;
  method: string;
  path: string;
  status: number | null;
  subject: string | null;
  node: string | null;
  ms: number;
}

/** The access log's lines berth api has written on standard error so far. */
function logLines(api: ApiProcess): Line[] {
  return api
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

async function waitForLines(api: ApiProcess, count: number): Promise<Line[]> {
  for (let tries = 0; tries < 100; tries++) {
    const lines = logLines(api);
    if (lines.length >= count) return lines;
    await sleep(50);
  }
  return logLines(api);
}

const SECRET = 'hunter2-s3cr3t-in-the-body';

describe("berth api's access log: a JSON line a request, never a token, body or secret", () => {
  let world: World;
  let issuer: Issuer;
  let api: ApiProcess;
  let token: string;
  before(async () => {
    world = await makeWorld({ m: { description: 'a module' } });
    issuer = await startIssuer();
    api = await startApiOn(world.state, issuer.url);
    token = await issuer.token({ sub: 'deployer' });
  });
  after(async () => {
    await api.stop();
    await issuer.close();
    await world.cleanup();
  });

  it('logs each request with its subject and node; tokens, bodies and queries stay out', async () => {
    const bad = flipSignatureByte(token);
    const asked = [
      // A good token, a body that holds a secret where berth drops unknown fields.
      {
        path: '/assign',
        body: JSON.stringify({ node: 'box', module: 'm', password: SECRET }),
        headers: { Authorization: `Bearer ${token}` },
      },
      // A token whose signature does not verify.
      {
        path: '/assign',
        body: JSON.stringify({ node: 'box', module: 'm' }),
        headers: { Authorization: `Bearer ${bad}` },
      },
      // No token at all.
      { path: '/adopt', body: JSON.stringify({ node: 'box' }) },
      // A 404, with a token in its query, as a careless client sends it.
      { method: 'GET', path: `/openapi.json?access_token=${token}` },
      // A body that is not JSON, holding the secret.
      {
        path: '/converge',
        body: `{"node": "box", ${SECRET}`,
        headers: { Authorization: `Bearer ${token}` },
      },
    ];
    const statuses = [];
    for (const request of asked)
      statuses.push(
        (
          await httpAsk(api.url, {
            ...request,
            headers: { 'Content-Type': 'application/json', ...request.headers },
          })
        ).status,
      );
    assert.deepEqual(statuses, [200, 401, 401, 404, 400]);

    const lines = await waitForLines(api, asked.length);
    assert.deepEqual(
      lines.map(({ method, path, status, subject, node }) => ({
        method,
        path,
        status,
        subject,
        node,
      })),
      [
        { method: 'POST', path: '/assign', status: 200, subject: 'deployer', node: 'box' },
        { method: 'POST', path: '/assign', status: 401, subject: null, node: null },
        { method: 'POST', path: '/adopt', status: 401, subject: null, node: null },
        { method: 'GET', path: '/openapi.json', status: 404, subject: null, node: null },
        { method: 'POST', path: '/converge', status: 400, subject: 'deployer', node: null },
      ],
    );
    for (const line of lines) {
      assert.ok(!Number.isNaN(Date.parse(line.time)), line.time);
      assert.ok(Number.isFinite(line.ms) && line.ms >= 0, String(line.ms));
      assert.deepEqual(Object.keys(line), [
        'time',
        'method',
        'path',
        'status',
        'subject',
        'node',
        'ms',
      ]);
    }
    const everything = api.stderr();
    for (const kept of [token, bad, token.split('.')[2] as string, SECRET, 'password'])
      assert.ok(!everything.includes(kept), `stderr holds ${kept.slice(0, 20)}…`);
  });

  it('a request whose client went away before any answer is logged with no status, not 200', async () => {
    const before = logLines(api).length;
    // A verified token, then a body that stops short of its Content-Length, then gone.
    const socket = connect(api.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      `POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"node":`,
    );
    await sleep(300);
    socket.destroy();
    const lines = await waitForLines(api, before + 1);
    const line = lines[before];
    assert.deepEqual(
      line && { method: line.method, path: line.path, status: line.status, subject: line.subject },
      { method: 'POST', path: '/assign', status: null, subject: 'deployer' },
    );
  });
});

describe('the access log while no identity provider answers', () => {
  let world: World;
  let api: ApiProcess;
  before(async () => {
    world = await makeWorld();
    const port = await freePort();
    api = await startApi([
      '--listen',
      '127.0.0.1:0',
      '--issuer',
      `http://127.0.0.1:${port}`,
      '--state',
      world.state,
    ]);
  });
  after(async () => {
    await api.stop();
    await world.cleanup();
  });

  it('logs the 401 while no identity provider answers for each request, with no subject', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await httpAsk(api.url, {
        path: '/assign',
        body: '{"node":"box","module":"m"}',
        headers: { Authorization: 'Bearer not.a.token' },
      });
      assert.equal(answer.status, 401);
      assert.match(String(answer.body?.refused), /^berth cannot yet verify a token from /);
    }
    const lines = await waitForLines(api, 3);
    assert.deepEqual(
      lines.map(({ status, subject, node }) => ({ status, subject, node })),
      Array(3).fill({ status: 401, subject: null, node: null }),
    );
    assert.ok(!api.stderr().includes('not.a.token'));
  });
});

describe('the access log at the close', () => {
  let world: World;
  let api: ApiProcess;
  before(async () => {
    world = await makeWorld();
    api = await startApiOn(world.state, `http://127.0.0.1:${await freePort()}`);
  });
  after(async () => {
    await api.stop();
    await world.cleanup();
  });

  it('has a line for every answer given, those of the close too, once berth api has exited', async () => {
    const answered: number[] = [];
    let signalled = false;
    // Eight keep-alive clients ask without a pause, before the signal and through the close.
    const client = async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let asked = 0; asked < 5_000; asked++) {
          const answer = await httpAsk(api.url, {
            path: asked % 2 ? '/assign' : '/nope',
            body: '{}',
            agent,
          }).catch(() => undefined);
          // Refused or reset: berth api has closed its connections; the close is over for this client.
          if (!answer) return;
          answered.push(answer.status);
          if (signalled && answer.status === 503) return;
        }
      } finally {
        agent.destroy();
      }
    };
    const clients = Array.from({ length: 8 }, client);
    for (let waited = 0; answered.length < 200 && waited < 400; waited++) await sleep(50);
    signalled = true;
    api.child.kill('SIGTERM');
    await Promise.all(clients);
    assert.equal((await api.exited).code, 0);

    const count = (statuses: (number | null)[]) =>
      statuses.reduce<Record<string, number>>((counts, status) => {
        counts[String(status)] = (counts[String(status)] ?? 0) + 1;
        return counts;
      }, {});
    assert.ok(
      answered.length >= 200,
      `only ${answered.length} answers before and during the close`,
    );
    assert.deepEqual(count(logLines(api).map((line) => line.status)), count(answered));
  });
});
