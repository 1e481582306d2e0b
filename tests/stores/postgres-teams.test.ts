/**
 * A team on one PostgreSQL database, through real processes: the built binary's command
 * lines and `berth api`s, the store chosen by berth.json's `store` or `$BERTH_STORE`.
 * Nothing is mocked: a server of the test's own (tests/helpers/postgres-server.ts).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiWorld, type ServedApiWorld } from '../helpers/api-world.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { prng, sleep, startBerth } from '../helpers/reliability.ts';
import { SAFETY_MS } from '../helpers/safety.ts';
import { digestOf, makeWorld, runBerth, type World } from '../helpers/world.ts';

const NODES = ['n1', 'n2', 'n3', 'n4'];

/** A world whose berth.json names `store`, with nodes n1…n4 and `slow`, each rooted in it. */
async function teamWorld(store: string | undefined, modules: Record<string, unknown> = {}) {
  const world = await makeWorld(modules);
  const nodes: Record<string, { root: string }> = {};
  for (const node of [...NODES, 'slow', 'gone']) {
    const root = join(world.dir, 'roots', node);
    await mkdir(root, { recursive: true });
    nodes[node] = { root };
  }
  await world.writeSettings(store === undefined ? { nodes } : { nodes, store });
  return world;
}

/** What was acknowledged to one writer: each act on its own modules, in order. */
interface Acked {
  act: 'assign' | 'unassign';
  node: string;
  module: string;
}

/** The status of every node, as `berth status --json` says it. */
async function statusOf(world: World, env: Record<string, string> = {}) {
  const run = await runBerth(['--state', world.state, 'status', '--json'], env);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout).nodes as {
    node: string;
    assigned: string[];
    managed: Record<string, unknown>;
    lock: { host: string; pid: number; act: string; node: string; since: string } | null;
  }[];
}

async function logOf(world: World) {
  const run = await runBerth(['--state', world.state, 'log', '--json']);
  assert.equal(run.code, 0, run.stderr);
  return run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, string>);
}

/** Waits until `path` exists; its text. */
async function waitForFile(path: string): Promise<string> {
  const deadline = Date.now() + SAFETY_MS;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${SAFETY_MS} ms`);
    await sleep(50);
  }
}

/** Ends the hook whose pid it wrote, if it is still running. */
function endHook(pidText: string | undefined) {
  const pid = Number(pidText?.trim());
  if (pid > 0)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = postgresUnavailable();

describe('a team on one PostgreSQL database, through real processes', () => {
  let server: PostgresServer;
  before(async () => {
    if (skip) return;
    server = await startPostgres();
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
  });

  it('loses no update: two berth api and three command lines writing shared nodes at once', {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const writers = ['api1a', 'api1b', 'api2a', 'api2b', 'cli1', 'cli2', 'cli3'];
    const modules: Record<string, unknown> = {};
    for (const writer of writers)
      for (let m = 0; m < 3; m++) modules[`${writer}-m${m}`] = { description: 'a plain module' };
    const world = await teamWorld(url, modules);
    const apis: ServedApiWorld[] = [];
    try {
      for (let n = 0; n < 2; n++) apis.push(await apiWorld({ world }));
      const acked = new Map<string, Acked[]>();
      /** One writer: acts on its own modules on random shared nodes, one at a time. */
      const write = async (writer: string, acts: number, send: (act: Acked) => Promise<void>) => {
        const rng = prng(writer.length * 7919 + writer.charCodeAt(writer.length - 1));
        const assigned = new Set<string>();
        const mine: Acked[] = [];
        acked.set(writer, mine);
        for (let n = 0; n < acts; n++) {
          const node = rng.pick(NODES);
          const module = `${writer}-m${rng.int(3)}`;
          const key = `${node}/${module}`;
          const act: Acked = {
            act: assigned.has(key) ? 'unassign' : 'assign',
            node,
            module,
          };
          await send(act);
          mine.push(act);
          if (act.act === 'assign') assigned.add(key);
          else assigned.delete(key);
        }
      };
      const overApi = (api: ServedApiWorld, subject: string) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        return async (act: Acked) => {
          const answer = await api.ask(
            `/${act.act}`,
            { node: act.node, module: act.module },
            { as: subject, agent },
          );
          assert.equal(answer.status, 200, `${act.act} ${act.node} ${act.module}: ${answer.text}`);
        };
      };
      const overCli = async (act: Acked) => {
        const run = await runBerth(['--state', world.state, act.act, act.node, act.module]);
        assert.equal(run.code, 0, `${act.act} ${act.node} ${act.module}: ${run.stderr}`);
      };
      const [one, two] = apis as [ServedApiWorld, ServedApiWorld];
      await Promise.all([
        write('api1a', 30, overApi(one, 'api1a')),
        write('api1b', 30, overApi(one, 'api1b')),
        write('api2a', 30, overApi(two, 'api2a')),
        write('api2b', 30, overApi(two, 'api2b')),
        write('cli1', 8, overCli),
        write('cli2', 8, overCli),
        write('cli3', 8, overCli),
      ]);

      // Every acknowledged act is in the database: the assignments are what the last
      // act on each (node, module) left…
      const expected = new Map<string, Set<string>>(NODES.map((node) => [node, new Set()]));
      for (const mine of acked.values())
        for (const act of mine) {
          const set = expected.get(act.node) as Set<string>;
          if (act.act === 'assign') set.add(act.module);
          else set.delete(act.module);
        }
      const status = await statusOf(world);
      for (const node of NODES)
        assert.deepEqual(
          [...(status.find((item) => item.node === node)?.assigned ?? [])].sort(),
          [...(expected.get(node) as Set<string>)].sort(),
          `the assignments of ${node}`,
        );
      assert.ok(
        status.every((item) => item.lock === null),
        'no lock is left held',
      );

      // …and the journal holds each of them once, done, in the order acknowledged.
      const journal = await logOf(world);
      const total = [...acked.values()].reduce((sum, mine) => sum + mine.length, 0);
      assert.equal(journal.length, total, 'one journal line per acknowledged act');
      assert.ok(journal.every((entry) => entry.outcome === 'done'));
      for (const [writer, mine] of acked) {
        const journaled = journal
          .filter((entry) => entry.module?.startsWith(`${writer}-`))
          .map((entry) => ({ act: entry.act, node: entry.node, module: entry.module }));
        assert.deepEqual(journaled, mine, `the acts of ${writer}, in order`);
      }
      // Each node's journal is in the order its acts were made: times never go back.
      for (const node of NODES) {
        const times = journal.filter((entry) => entry.node === node).map((entry) => entry.at);
        assert.deepEqual(times, [...times].sort(), `the journal of ${node} in order`);
      }
    } finally {
      await Promise.all(apis.map((api) => api.close()));
      await world.cleanup();
    }
  });

  it('shows who holds a node lock while a slow act runs, and frees it when that controller is SIGKILLed', {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const world = await teamWorld(url, {
      slowstart: {
        description: 'a module whose start takes its time',
        start: 'echo $$ > "$BERTH_ROOT/hook.pid"; exec sleep 30',
      },
    });
    const hookPid = join(world.dir, 'roots', 'slow', 'hook.pid');
    try {
      const assigned = await world.berth('assign', 'slow', 'slowstart');
      assert.equal(assigned.code, 0, assigned.stderr);
      const preview = await world.berth('converge', 'slow');
      assert.equal(preview.code, 0, preview.stderr);
      const before = new Date().toISOString();
      const victim = startBerth([
        '--state',
        world.state,
        'converge',
        'slow',
        '--yes',
        '--digest',
        digestOf(preview.stdout),
      ]);
      await waitForFile(hookPid);

      // berth status names the holder: which berth (host, pid), which act, since when.
      const holder = (await statusOf(world)).find((item) => item.node === 'slow')?.lock;
      assert.ok(holder, 'the lock of slow is held');
      assert.equal(holder.host, hostname());
      assert.equal(holder.pid, victim.child.pid);
      assert.equal(holder.act, 'converge');
      assert.ok(
        holder.since >= before && holder.since <= new Date().toISOString(),
        `since ${holder.since}: not since the act began`,
      );
      const words = await world.berth('status', 'slow');
      assert.match(
        words.stdout,
        new RegExp(
          `locked: berth process ${victim.child.pid} on ${hostname()} is acting \\(converge, since `,
        ),
      );

      victim.child.kill('SIGKILL');
      await victim.exited;
      // Its lock went with its connection: the next act on that node has it, where a lock
      // still held would end it in an error at its deadline.
      const next = await world.berth('unassign', 'slow', 'slowstart');
      assert.equal(next.code, 0, next.stderr);
      assert.equal((await statusOf(world)).find((item) => item.node === 'slow')?.lock, null);
      // Every acknowledged act there is journaled.
      const acts = (await logOf(world))
        .filter((entry) => entry.node === 'slow' && entry.outcome === 'done')
        .map((entry) => entry.act);
      assert.deepEqual(acts, ['assign', 'unassign']);
    } finally {
      endHook(await readFile(hookPid, 'utf8').catch(() => undefined));
      await world.cleanup();
    }
  });

  it('stops an act whose database went away mid-act with what it did, in words; after a restart the next act carries on', {
    skip,
  }, async () => {
    const url = await server.createDatabase();
    const world = await teamWorld(url, {
      waits: {
        description: 'a module whose start waits to be let go',
        data: ['/var/lib/waits'],
        start:
          'touch "$BERTH_ROOT/started"; i=0; while [ ! -e "$BERTH_ROOT/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done',
      },
    });
    const root = join(world.dir, 'roots', 'slow');
    try {
      assert.equal((await world.berth('assign', 'slow', 'waits')).code, 0);
      const preview = await world.berth('converge', 'slow');
      const acting = startBerth([
        '--state',
        world.state,
        'converge',
        'slow',
        '--yes',
        '--digest',
        digestOf(preview.stdout),
      ]);
      await waitForFile(join(root, 'started'));
      await server.stopServer();
      await writeFile(join(root, 'go'), '');
      const end = await acting.exited;
      const at = `PostgreSQL at 127.0.0.1:${server.port}`;
      assert.equal(end.code, 3, acting.stdout() + acting.stderr());
      assert.match(acting.stdout(), /created \/var\/lib\/waits/, 'it says what it did');
      assert.match(
        acting.stderr(),
        new RegExp(`^the stores cannot be opened: .*the connection to ${at} was lost`, 'm'),
      );

      // While it is down, every command says so.
      const down = await world.berth('status');
      assert.equal(down.code, 3);
      assert.match(down.stderr, new RegExp(`the stores cannot be opened: .*${at} refused`));

      await server.startServer();
      const again = await world.berth('converge', 'slow');
      assert.equal(again.code, 0, again.stderr);
      await writeFile(join(root, 'go'), '');
      const carried = await world.berth(
        'converge',
        'slow',
        '--yes',
        '--digest',
        digestOf(again.stdout),
      );
      assert.equal(carried.code, 0, carried.stderr);
      const status = (await statusOf(world)).find((item) => item.node === 'slow');
      assert.ok(status && 'waits' in status.managed, JSON.stringify(status));
      assert.equal(status?.lock, null);
    } finally {
      await server.startServer();
      await world.cleanup();
    }
  });

  it('says the database is down at the start: exit 3, in words', { skip }, async () => {
    await server.stopServer();
    const world = await teamWorld(server.url);
    try {
      const words = `the stores cannot be opened: PostgreSQL at 127.0.0.1:${server.port} refused the connection\n`;
      for (const args of [['status'], ['log'], ['assign', 'n1', 'x']]) {
        const run = await world.berth(...args);
        assert.deepEqual(
          { code: run.code, stderr: run.stderr },
          { code: 3, stderr: words },
          args.join(' '),
        );
      }
      // berth api starts all the same, and answers each act 503 in the same words.
      const api = await apiWorld({ world });
      try {
        const answer = await api.ask('/assign', { node: 'n1', module: 'x' });
        assert.equal(answer.status, 503);
        assert.deepEqual(answer.body, { refused: words.trimEnd(), code: 'stores_unavailable' });
      } finally {
        await api.close();
      }
    } finally {
      await server.startServer();
      await world.cleanup();
    }
  });

  it('takes $BERTH_STORE over the store in berth.json', { skip }, async () => {
    const url = await server.createDatabase();
    const nowhere = `postgresql://berth@127.0.0.1:9/nowhere`;
    const world = await teamWorld(nowhere, { plain: { description: 'plain' } });
    try {
      const refused = await world.berth('assign', 'n1', 'plain');
      assert.equal(refused.code, 3);
      assert.match(refused.stderr, /PostgreSQL at 127\.0\.0\.1:9 refused the connection/);
      const args = ['--state', world.state];
      const done = await runBerth([...args, 'assign', 'n1', 'plain'], { BERTH_STORE: url });
      assert.equal(done.code, 0, done.stderr);
      const status = await statusOf(world, { BERTH_STORE: url });
      assert.deepEqual(status.find((item) => item.node === 'n1')?.assigned, ['plain']);
      const kept = await server.admin("SELECT record FROM berth_nodes WHERE node = 'n1'", [], url);
      assert.deepEqual(kept.rows[0]?.record.assigned, ['plain'], 'kept in $BERTH_STORE');
    } finally {
      await world.cleanup();
    }
  });

  it('refuses a store URL with a password, in words, never saying it', { skip }, async () => {
    const world = await teamWorld(`postgresql://berth:hunter2@127.0.0.1:${server.port}/berth`);
    try {
      for (const args of [['status'], ['assign', 'n1', 'x']]) {
        const run = await world.berth(...args);
        assert.equal(run.code, 1, args.join(' '));
        assert.match(
          run.stderr,
          /berth\.json is not valid: store: the store URL carries a password, and berth keeps none in its settings/,
        );
        assert.doesNotMatch(run.stdout + run.stderr, /hunter2/);
      }
      await world.writeSettings({ nodes: { n1: { root: world.root } } });
      const fromEnv = await runBerth(['--state', world.state, 'status'], {
        BERTH_STORE: `postgresql://berth@127.0.0.1:${server.port}/berth?password=hunter2`,
      });
      assert.equal(fromEnv.code, 3);
      assert.match(fromEnv.stderr, /\$BERTH_STORE is refused: the store URL carries a password/);
      assert.doesNotMatch(fromEnv.stdout + fromEnv.stderr, /hunter2/);
    } finally {
      await world.cleanup();
    }
  });
});
