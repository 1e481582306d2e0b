/**
 * Graceful close, in real processes: SIGTERM lets requests in flight finish and get
 * their answers, cuts one still running at 5 s, does not wait for idle keep-alive
 * connections, and ends with exit code 0. An act cut at the deadline has its hook
 * stopped and records what it did, so nothing runs on behind a process that is gone.
 *
 * `berth api` itself refuses every command route without a verified token, so a
 * request is held in flight in it by an issuer slow to answer; acts in flight are
 * held in the test server
 * (tests/helpers/test-server.ts: the same app and listen(), with the test
 * authenticator) by a converge whose start hook sleeps.
 */
import assert from 'node:assert/strict';
import { access, readFile, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SHUTTING_DOWN } from '../../src/http/serve.ts';
import { apiWorld } from '../helpers/api-world.ts';
import {
  journalLines,
  parseAnswer,
  post,
  startBerth,
  startTestServer,
} from '../helpers/reliability.ts';
import { until } from '../helpers/safety.ts';
import { untimed } from '../helpers/timed.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

/** Whether a connection to `port` is refused: the server has begun to close. */
function refuses(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.on('error', () => done(true));
  });
}

/** Whether a file is there: a hook's mark that it has begun. */
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A keep-alive connection that has had one answer and now sits idle. */
async function idleKeepAlive(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((done) => {
    socket.once('data', () => done());
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
  return socket;
}

/** How long the whole answer at the start of `text` is (Content-Length framed); 0 until it is whole. */
function wholeAnswer(text: string): number {
  const head = text.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
  if (head < 0 || !length) return 0;
  const end = head + 4 + Number(length[1]);
  return Buffer.byteLength(text) >= end ? end : 0;
}

/**
 * Sends a request and keeps everything the server sends back, until it closes. `before`,
 * a whole request, goes first in the same write: once it is answered (`answeredBefore`),
 * the server has read the bytes of `text` that came with it; its answer is not kept.
 */
function heldRequest(port: number, text: string, before = '') {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let beforeDone = before === '';
  let answered = () => {};
  const answeredBefore = new Promise<void>((done) => {
    answered = done;
  });
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    received += chunk;
    const first = beforeDone ? 0 : wholeAnswer(received);
    if (first > 0) {
      received = received.slice(first);
      beforeDone = true;
      answered();
    }
  });
  let done = false;
  const closed = new Promise<{ answer: ReturnType<typeof parseAnswer> }>((closing) =>
    socket.on('close', () => {
      done = true;
      closing({ answer: parseAnswer(received) });
    }),
  );
  socket.write(before + text);
  return { socket, closed, answeredBefore, isClosed: () => done };
}

function postText(path: string, json: string) {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

describe('berth api, the real process, on SIGTERM', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('exits 0 with idle keep-alive connections open', async () => {
    const served = await apiWorld({ world, issuerDown: true });
    try {
      const idle = await Promise.all([
        idleKeepAlive(served.port),
        idleKeepAlive(served.port),
        idleKeepAlive(served.port),
      ]);
      const end = await served.end();
      for (const socket of idle) socket.destroy();
      assert.equal(end.code, 0, served.api.stderr());
    } finally {
      await served.close();
    }
  });

  it('lets a request in flight finish and answer, then exits 0', async () => {
    // An issuer that holds its answers until the test lets it: the request, the first to
    // need the issuer, waits on it.
    const served = await apiWorld({ world });
    const { issuer, port } = served;
    issuer.behaviour = 'hang';
    try {
      const idle = await idleKeepAlive(port);
      const held = heldRequest(
        port,
        `${postText('/assign', '{"node":"box","module":"m"}')}`.replace(
          'Host: 127.0.0.1\r\n',
          'Host: 127.0.0.1\r\nAuthorization: Bearer abc.def.ghi\r\n',
        ),
      );
      await until(
        () => issuer.hits('/.well-known/openid-configuration') > 0,
        'the request asked the issuer',
      );
      const ended = served.end();
      await until(() => refuses(port), 'berth api stopped taking connections');
      assert.equal(held.isClosed(), false, 'the request in flight is not cut');
      // The issuer answers at last, that it has no metadata for berth to read.
      issuer.behaviour = 'not-json';
      issuer.release();
      const answered = await held.closed;
      const end = await ended;
      idle.destroy();
      assert.equal(answered.answer.status, 401, answered.answer.raw);
      assert.match(JSON.parse(answered.answer.body).refused, /berth cannot yet verify a token/);
      assert.equal(end.code, 0, served.api.stderr());
    } finally {
      await served.close();
    }
  });
});

describe('the Command API with acts in flight, on SIGTERM', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    await world.writeModule('quick', {
      description: 'a module whose start ends when the test says',
      start:
        'touch "$BERTH_ROOT/begun-quick"; while [ ! -e "$BERTH_ROOT/go-quick" ]; do sleep 0.05; done; touch "$BERTH_ROOT/started-quick"',
    });
    await world.writeModule('slow', {
      description: 'a module whose start takes 20 s',
      start:
        'echo $$ > "$BERTH_ROOT/slow.pid.tmp"; mv "$BERTH_ROOT/slow.pid.tmp" "$BERTH_ROOT/slow.pid"; sleep 20; touch "$BERTH_ROOT/started-slow"',
    });
    await world.writeModule('slower', {
      description: 'a module whose start takes 20 s',
      start: 'touch "$BERTH_ROOT/begun-slower"; sleep 20',
    });
    await world.writeModule('queued', {
      description: 'a module whose start is quick',
      start: 'touch "$BERTH_ROOT/started-queued"',
    });
  });
  after(() => world.cleanup());

  async function convergePreview(port: number, filter: string) {
    const answer = await post(port, '/converge', JSON.stringify({ node: 'box', filter }));
    assert.equal(answer.status, 200, answer.raw);
    return digestOf(JSON.parse(answer.body).said);
  }

  it('lets an act in flight finish and answer, then exits 0', async () => {
    const server = await startTestServer(world.state);
    assert.equal(
      (await post(server.port, '/assign', '{"node":"box","module":"quick"}')).status,
      200,
    );
    const digest = await convergePreview(server.port, 'quick');
    const idle = await idleKeepAlive(server.port);
    const act = heldRequest(
      server.port,
      postText('/converge', JSON.stringify({ node: 'box', filter: 'quick', yes: true, digest })),
    );
    await until(() => exists(join(world.root, 'begun-quick')), 'the start hook of quick began');
    server.child.kill('SIGTERM');
    // New connections are refused once the server closes; the act in flight goes on.
    await until(() => refuses(server.port), 'the server stopped taking connections');
    assert.equal(act.isClosed(), false, 'the act in flight is not cut');
    await writeFile(join(world.root, 'go-quick'), '');
    const answered = await act.closed;
    const end = await server.exited;
    idle.destroy();
    assert.equal(answered.answer.status, 200, answered.answer.raw);
    assert.equal(answered.answer.headers.connection, 'close', 'the answer in flight closes');
    assert.match(JSON.parse(answered.answer.body).said, /ran start of quick/);
    assert.equal(end.code, 0, server.stderr());
    const last = (await journalLines(world.state)).at(-1);
    assert.equal(last?.act, 'converge');
    assert.equal(last?.outcome, 'done');
  });

  it('answers a request whose headers end after SIGTERM 503 with Connection: close, and does not carry it out', async () => {
    const server = await startTestServer(world.state);
    const journaled = (await journalLines(world.state)).length;
    // Begun before the signal, on a connection that is therefore not idle; ended after it.
    // It comes in one write after a whole request: once that one is answered, the server
    // has read this one's first lines too.
    const late = heldRequest(
      server.port,
      'POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    );
    await late.answeredBefore;
    server.child.kill('SIGTERM');
    await until(() => refuses(server.port), 'the server stopped taking connections');
    const json = '{"node":"box","module":"quick"}';
    late.socket.write(
      `Content-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`,
    );
    const { answer } = await late.closed;
    const end = await server.exited;
    assert.equal(answer.status, 503, answer.raw);
    assert.equal(answer.headers['content-type'], 'application/json');
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(JSON.parse(answer.body), { refused: SHUTTING_DOWN, code: 'shutting_down' });
    assert.equal((await journalLines(world.state)).length, journaled, 'nothing was done');
    assert.equal(end.code, 0, server.stderr());
  });

  it('does not begin an act still waiting for the lock when acts are stopped: 503, nothing done', async () => {
    const server = await startTestServer(world.state);
    for (const module of ['slower', 'queued'])
      assert.equal(
        (await post(server.port, '/assign', JSON.stringify({ node: 'box', module }))).status,
        200,
      );
    const slower = await convergePreview(server.port, 'slower');
    const queued = await convergePreview(server.port, 'queued');
    const running = heldRequest(
      server.port,
      postText(
        '/converge',
        JSON.stringify({ node: 'box', filter: 'slower', yes: true, digest: slower }),
      ),
    );
    await until(() => exists(join(world.root, 'begun-slower')), 'the start hook of slower began');
    // Waits for the lock that the converge of slower holds through its 20 s hook.
    const accepted = () =>
      server
        .stdout()
        .split('\n')
        .filter((line) => line === 'accepted').length;
    const acceptedBefore = accepted();
    const waiting = heldRequest(
      server.port,
      postText(
        '/converge',
        JSON.stringify({ node: 'box', filter: 'queued', yes: true, digest: queued }),
      ),
    );
    await until(() => accepted() > acceptedBefore, 'the queued converge reached the app');
    const journaled = (await journalLines(world.state)).length;
    server.child.kill('SIGTERM');
    const [stopped, refused] = await Promise.all([running.closed, waiting.closed]);
    const end = await server.exited;
    assert.equal(stopped.answer.status, 409, stopped.answer.raw);
    assert.equal(refused.answer.status, 503, refused.answer.raw);
    assert.equal(refused.answer.headers.connection, 'close');
    // The node whose lock the act waited for is named, with the code; nothing was begun.
    assert.deepEqual(untimed(JSON.parse(refused.answer.body)), {
      refused:
        'the stores cannot be opened: berth api is shutting down, and the act was not begun; send it again once berth api is back',
      code: 'stores_unavailable',
      nodes: {
        box: { steps: [], blockers: [], code: 'stores_unavailable', outcome: 'refused' },
      },
    });
    assert.equal(end.code, 0, server.stderr());
    const acts = (await journalLines(world.state)).slice(journaled);
    assert.deepEqual(
      acts.map((act) => [act.act, act.module, act.outcome]),
      [['converge', 'slower', 'failed']],
    );
    await assert.rejects(readFile(join(world.root, 'started-queued')), { code: 'ENOENT' });
  });

  it('stops an act still running at 4 s: its hook is stopped, the act journaled as stopped and answered, exit 0', async () => {
    const server = await startTestServer(world.state);
    assert.equal(
      (await post(server.port, '/assign', '{"node":"box","module":"slow"}')).status,
      200,
    );
    const digest = await convergePreview(server.port, 'slow');
    const act = heldRequest(
      server.port,
      postText('/converge', JSON.stringify({ node: 'box', filter: 'slow', yes: true, digest })),
    );
    await until(() => exists(join(world.root, 'slow.pid')), 'the start hook of slow began');
    server.child.kill('SIGTERM');
    const cut = await act.closed;
    const end = await server.exited;
    assert.equal(cut.answer.status, 409, cut.answer.raw);
    assert.equal(cut.answer.headers.connection, 'close');
    assert.match(
      JSON.parse(cut.answer.body).refused,
      /^converge of box stopped at slow: start of slow was stopped: berth api closed before the act ended \(4 s after it was told to stop\)/,
    );
    assert.equal(end.code, 0, server.stderr());
    const hook = Number(await readFile(join(world.root, 'slow.pid'), 'utf8'));
    assert.throws(() => process.kill(hook, 0), { code: 'ESRCH' }, 'the start hook was stopped');
    const last = (await journalLines(world.state)).at(-1);
    assert.equal(last?.act, 'converge');
    assert.equal(last?.outcome, 'failed');
    assert.match(
      String(last?.error),
      /^converge of box stopped at slow: start of slow was stopped: berth api closed before the act ended/,
    );
    const state = await world.readState();
    assert.deepEqual(
      (state.managed as Record<string, Record<string, { started: boolean }>>).box?.slow?.started,
      false,
    );
    const next = await world.berth('assign', 'box', 'quick');
    assert.equal(next.code, 0, next.stderr);
    assert.equal((await world.berth('status', 'box')).code, 0);
  });
});

describe('the command line on Ctrl-C during a converge', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    await world.writeModule('slow', {
      description: 'a module whose start takes 20 s',
      start: 'echo $$ > "$BERTH_ROOT/slow.pid"; sleep 20; touch "$BERTH_ROOT/started-slow"',
    });
  });
  after(() => world.cleanup());

  it('stops the hook, says what was done, journals the act as stopped, and exits 1', async () => {
    assert.equal((await world.berth('assign', 'box', 'slow')).code, 0);
    const digest = digestOf((await world.berth('converge', 'box')).stdout);
    const act = startBerth([
      '--state',
      world.state,
      'converge',
      'box',
      '--yes',
      '--digest',
      digest,
    ]);
    await until(() => act.stdout().includes('berth manages slow on box'), 'the act began');
    await until(() => exists(join(world.root, 'slow.pid')), 'the start hook of slow began');
    act.child.kill('SIGINT');
    const end = await act.exited;
    assert.equal(end.code, 1, act.stderr());
    assert.match(act.stdout(), /^berth manages slow on box$/m);
    assert.equal(
      act.stderr(),
      'converge of box stopped at slow: start of slow was stopped: berth was interrupted by SIGINT\n',
    );
    const hook = Number(await readFile(join(world.root, 'slow.pid'), 'utf8'));
    assert.throws(() => process.kill(hook, 0), { code: 'ESRCH' }, 'the start hook was stopped');
    const last = (await journalLines(world.state)).at(-1);
    assert.equal(last?.outcome, 'failed');
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /update slow:\n {2}run start: /, 'a later converge carries on');
  });
});
