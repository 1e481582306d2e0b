import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type ApiProcess, httpAsk } from './helpers/api-process.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { flipSignatureByte } from './helpers/issuer.ts';
import { until } from './helpers/safety.ts';

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

/** The access log once it holds `count` lines: each is written as its answer is done. */
async function waitForLines(api: ApiProcess, count: number): Promise<Line[]> {
  await api.until(() => logLines(api).length >= count, `${count} lines in the access log`);
  return logLines(api);
}

const SECRET = 'hunter2-s3cr3t-in-the-body';

describe("berth api's access log: a JSON line a request, never a token, body or secret", () => {
  let served: ServedApiWorld;
  let api: ApiProcess;
  let token: string;
  before(async () => {
    served = await apiWorld({ modules: { m: { description: 'a module' } } });
    api = served.api;
    token = await served.token('deployer');
  });
  after(() => served?.close());

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
    // Another request with the same token, begun after this one and answered: berth began
    // verifying this one's token first, and the other's act takes longer than that.
    const witness = await served.ask('/adopt', { node: 'box' }, { as: 'deployer' });
    socket.destroy();
    const lines = (await waitForLines(api, before + 2)).slice(before);
    assert.deepEqual(
      lines.map(({ method, path, status, subject }) => ({ method, path, status, subject })),
      [
        { method: 'POST', path: '/adopt', status: witness.status, subject: 'deployer' },
        { method: 'POST', path: '/assign', status: null, subject: 'deployer' },
      ],
    );
  });
});

describe('the access log while no identity provider answers', () => {
  let served: ServedApiWorld;
  let api: ApiProcess;
  before(async () => {
    served = await apiWorld({ issuerDown: true });
    api = served.api;
  });
  after(() => served?.close());

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
  let served: ServedApiWorld;
  let api: ApiProcess;
  before(async () => {
    served = await apiWorld({ issuerDown: true });
    api = served.api;
  });
  after(() => served?.close());

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
    await until(() => answered.length >= 200, '200 answers before the signal');
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
