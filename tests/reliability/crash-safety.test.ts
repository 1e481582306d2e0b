/**
 * Crash safety: berth killed with SIGKILL at random moments during a loop of acts,
 * on the command line and as an API server. Afterwards the state opens, every act
 * that was acknowledged (exit 0, or a 200) is in it, and the journal is whole line
 * by line. A lock left by a killed process is taken over.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  journalLines,
  PLAIN,
  post,
  prng,
  SOAK,
  sleep,
  startBerth,
  startTestServer,
  temporaryFiles,
} from '../helpers/reliability.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const CLI_ROUNDS = SOAK ? 400 : 60;
const PREVIEW_ROUNDS = SOAK ? 200 : 30;
const API_ROUNDS = SOAK ? 40 : 6;
/** At most this many acts are asked of each API server before it is killed. */
const PER_ROUND = 300;

/** What a run of acts must leave: acknowledged assigns kept, acknowledged unassigns gone. */
async function checkAcknowledged(
  world: World,
  assigned: Set<string>,
  unassigned: Set<string>,
  via: 'cli' | 'api',
) {
  const status = await world.berth('status', 'box', '--json');
  assert.equal(status.code, 0, `the state opens: ${status.stderr}`);
  const journal = await journalLines(world.state);
  const kept = new Set(JSON.parse(status.stdout).nodes[0].assigned as string[]);
  for (const module of assigned)
    assert.ok(kept.has(module), `acknowledged assign of ${module} lost`);
  for (const module of unassigned)
    assert.ok(!kept.has(module), `acknowledged unassign of ${module} lost`);
  const done = new Set(
    journal
      .filter((line) => line.outcome === 'done' && line.via === via)
      .map((line) => `${line.act} ${line.module}`),
  );
  for (const module of assigned) assert.ok(done.has(`assign ${module}`), `journal lacks ${module}`);
  for (const module of unassigned)
    assert.ok(done.has(`unassign ${module}`), `journal lacks unassign of ${module}`);
  // The next act opens the stores cleanly, under a lock taken over from the dead.
  const next = await world.berth('assign', 'box', 'after');
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(await temporaryFiles(world.state), [], 'no half-written file is left');
}

describe('SIGKILL at random moments', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    for (let i = 0; i < CLI_ROUNDS; i++) await world.writeModule(`m${i}`, PLAIN);
    for (let i = 0; i < API_ROUNDS * PER_ROUND; i++) await world.writeModule(`a${i}`, PLAIN);
    await world.writeModule('after', PLAIN);
  });
  after(() => world.cleanup());

  it(`keeps every acknowledged command-line act through ${CLI_ROUNDS} kills`, async () => {
    const rng = prng(7);
    const assigned = new Set<string>();
    const unassigned = new Set<string>();
    let killed = 0;
    // How long an act takes here, start to exit: the kills land across that span. It is
    // the median of the latest acts that ran to their end, so that it follows the
    // machine as it gets busier or quieter.
    const begun = Date.now();
    assert.equal((await startBerth(['--state', world.state, 'status']).exited).code, 0);
    const recent = [Date.now() - begun];
    const span = () => [...recent].sort((a, b) => a - b)[Math.floor(recent.length / 2)] as number;
    for (let i = 0; i < CLI_ROUNDS; i++) {
      // Two at once, so that a kill can also land while the other waits on the lock.
      const acts: { module: string; act: 'assign' | 'unassign' }[] = [
        { module: `m${i}`, act: 'assign' },
      ];
      const done = [...assigned];
      if (done.length > 0 && rng.int(3) === 0) {
        const module = rng.pick(done);
        assigned.delete(module);
        acts.push({ module, act: 'unassign' });
      }
      const started = Date.now();
      const runs = acts.map(({ module, act }) => ({
        module,
        act,
        run: startBerth(['--state', world.state, act, 'box', module]),
      }));
      // Mostly late in the span, where the act reads, writes and journals.
      const victim = runs[rng.int(runs.length)] as (typeof runs)[number];
      setTimeout(() => victim.run.child.kill('SIGKILL'), span() * (0.4 + rng.next() * 0.8));
      for (const { module, act, run } of runs) {
        const end = await run.exited;
        if (end.code === 0) {
          (act === 'assign' ? assigned : unassigned).add(module);
          recent.push(Date.now() - started);
          if (recent.length > 5) recent.shift();
        } else if (end.signal === 'SIGKILL') killed++;
        else assert.fail(`${act} ${module} exited ${end.code}: ${run.stderr()}`);
      }
    }
    assert.ok(killed >= CLI_ROUNDS / 4, `only ${killed} of ${CLI_ROUNDS} rounds killed an act`);
    await checkAcknowledged(world, assigned, unassigned, 'cli');
  });

  it(`keeps every acknowledged API act through ${API_ROUNDS} kills of the server`, async () => {
    const rng = prng(11);
    const assigned = new Set<string>();
    const unexpected: string[] = [];
    for (let round = 0; round < API_ROUNDS; round++) {
      const server = await startTestServer(world.state);
      const killAt = Date.now() + 200 + rng.int(1_500);
      let next = round * PER_ROUND;
      const last = next + PER_ROUND;
      const clients = Array.from({ length: 3 }, async () => {
        while (Date.now() < killAt + 500 && next < last) {
          const module = `a${next++}`;
          const answer = await post(
            server.port,
            '/assign',
            JSON.stringify({ node: 'box', module }),
          );
          if (answer.status === 200) assigned.add(module);
          else if (answer.status !== 0) unexpected.push(`assign ${module}: ${answer.raw}`);
          else break;
        }
      });
      await sleep(killAt - Date.now());
      server.child.kill('SIGKILL');
      await Promise.all(clients);
      await server.exited;
    }
    assert.deepEqual(unexpected, []);
    assert.ok(assigned.size > API_ROUNDS, `only ${assigned.size} acts were acknowledged`);
    await checkAcknowledged(world, assigned, new Set(), 'api');
  });

  it(`keeps every kept preview whole through ${PREVIEW_ROUNDS} previews killed at random moments`, async () => {
    const rng = prng(13);
    const own = await makeWorld({
      web: { description: 'a web server', files: { '/etc/web.conf': { content: 'port 80\n' } } },
    });
    try {
      assert.equal((await own.berth('assign', 'box', 'web')).code, 0);
      const converge = async () => {
        const shown = await own.berth('converge', 'box');
        assert.equal(shown.code, 0, shown.stderr);
        const digest = /digest ([0-9a-f]{64})\s*$/.exec(shown.stdout)?.[1] ?? '';
        const act = await own.berth('converge', 'box', '--yes', '--digest', digest);
        assert.equal(act.code, 0, act.stderr);
      };
      // berth manages web from here: a file changed on the box is a change to preview.
      await converge();
      const preview = () => startBerth(['--state', own.state, 'converge', 'box']);
      const recent: number[] = [];
      for (let i = 0; i < 3; i++) {
        const begun = Date.now();
        assert.equal((await preview().exited).code, 0);
        recent.push(Date.now() - begun);
      }
      const span = [...recent].sort((a, b) => a - b)[1] as number;
      let killed = 0;
      for (let i = 0; i < PREVIEW_ROUNDS; i++) {
        // What the box holds differs each round, so that each preview is a new one kept.
        await own.onBox('/etc/web.conf', `port ${i}\n`);
        const run = preview();
        setTimeout(() => run.child.kill('SIGKILL'), span * (0.3 + rng.next() * 0.9));
        const end = await run.exited;
        if (end.signal === 'SIGKILL') killed++;
        else assert.equal(end.code, 0, run.stderr());
      }
      assert.ok(killed >= PREVIEW_ROUNDS / 4, `only ${killed} of ${PREVIEW_ROUNDS} were killed`);
      // The next preview and its act run, under a lock taken over from the dead.
      await converge();
      const dir = join(own.state, 'nodes', 'box', 'previews');
      const kept = await readdir(dir);
      assert.ok(kept.length > 1 && kept.length <= 64, `${kept.length} kept`);
      for (const name of kept) JSON.parse(await readFile(join(dir, name), 'utf8'));
      assert.deepEqual(await temporaryFiles(own.state), [], 'no half-written file is left');
    } finally {
      await own.cleanup();
    }
  });

  it('takes over a lock whose owner was killed, and one left empty by a crash', async () => {
    const dead = startBerth(['--version']);
    await dead.exited;
    const lock = join(world.state, 'lock');
    await writeFile(
      lock,
      JSON.stringify({
        pid: dead.child.pid,
        host: (await import('node:os')).hostname(),
        nonce: 'x',
        at: '',
      }),
    );
    // Taken over: a lock waited out to its 10 s deadline would end the act with an error.
    const taken = await world.berth('assign', 'box', 'm1');
    assert.equal(taken.code, 0, taken.stderr);

    await writeFile(lock, '');
    const old = new Date(Date.now() - 60_000);
    await (await import('node:fs/promises')).utimes(lock, old, old);
    const empty = await world.berth('assign', 'box', 'm2');
    assert.equal(empty.code, 0, empty.stderr);
  });
});
