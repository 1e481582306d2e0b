/**
 * Concurrent writers: command-line processes and the API server assign and unassign
 * at once, with no lost update, no corrupt file, and every refusal in clear words;
 * two converge acts on one node are serialised, and the second is refused because
 * the first changed its preview.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  journalLines,
  PLAIN,
  post,
  SOAK,
  startBerth,
  startTestServer,
  temporaryFiles,
} from '../helpers/reliability.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const CLI_WRITERS = 4;
const API_WRITERS = 3;
const ACTS = SOAK ? 40 : 8;

/** A refusal a writer may meet under load: the lock not had in 10 s, said as such. */
const CLEAR_LOCK_REFUSAL =
  /^the stores cannot be opened: berth process \d+ on \S+ holds the lock \S+ and did not let go within 10s\n?$/;

describe('concurrent writers', () => {
  let world: World;
  let server: Awaited<ReturnType<typeof startTestServer>>;
  before(async () => {
    world = await makeWorld();
    for (let w = 0; w < CLI_WRITERS + API_WRITERS; w++)
      for (let i = 0; i < ACTS; i++) await world.writeModule(`w${w}-${i}`, PLAIN);
    await world.writeModule('slowstart', {
      description: 'a module whose start takes a second',
      start: 'sleep 1; touch "$BERTH_ROOT/started-slowstart"',
    });
    server = await startTestServer(world.state);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await world.cleanup();
  });

  /** One writer's acts, in order: each is done, or refused in clear words (and redone). */
  async function writer(w: number, act: 'assign' | 'unassign', modules: string[]) {
    const refusals: string[] = [];
    for (const module of modules) {
      for (let attempt = 0; ; attempt++) {
        let code: number;
        let refused = '';
        if (w < CLI_WRITERS) {
          const run = startBerth(['--state', world.state, act, 'box', module]);
          code = (await run.exited).code ?? -1;
          refused = run.stderr();
        } else {
          const answer = await post(
            server.port,
            `/${act}`,
            JSON.stringify({ node: 'box', module }),
          );
          code = answer.status === 200 ? 0 : answer.status;
          refused = answer.status === 200 ? '' : (JSON.parse(answer.body).refused ?? answer.raw);
        }
        if (code === 0) break;
        refusals.push(refused);
        assert.match(refused, CLEAR_LOCK_REFUSAL, `${act} ${module} refused unclearly`);
        assert.ok(attempt < 3, `${act} ${module} refused ${attempt + 1} times`);
      }
    }
    return refusals;
  }

  it('loses no update while command lines and the API server write at once', async () => {
    const own = (w: number) => Array.from({ length: ACTS }, (_, i) => `w${w}-${i}`);
    const writers = Array.from({ length: CLI_WRITERS + API_WRITERS }, (_, w) => w);
    const assigning = await Promise.all(writers.map((w) => writer(w, 'assign', own(w))));
    const dropped = (w: number) => own(w).filter((_, i) => i % 2 === 0);
    const unassigning = await Promise.all(writers.map((w) => writer(w, 'unassign', dropped(w))));

    const expected = writers.flatMap((w) => own(w).filter((_, i) => i % 2 === 1)).sort();
    const state = await world.readState();
    assert.deepEqual(
      [...((state.assignments as Record<string, string[]>).box ?? [])].sort(),
      expected,
    );
    const status = await world.berth('status', '--json');
    assert.equal(status.code, 0, status.stderr);
    const journal = await journalLines(world.state);
    const done = journal.filter((line) => line.outcome === 'done');
    assert.equal(done.length, writers.length * ACTS + writers.length * Math.ceil(ACTS / 2));
    assert.deepEqual(await temporaryFiles(world.state), []);
    const refusals = [...assigning, ...unassigning].flat();
    console.log(
      `# ${done.length} acts done at once; ${refusals.length} refused on the lock and redone`,
    );
  });

  it('serialises two converge acts on one node; the second is refused, saying what changed', async () => {
    assert.equal((await world.berth('assign', 'box', 'slowstart')).code, 0);
    const preview = await world.berth('converge', 'box', '--filter', 'slowstart');
    assert.equal(preview.code, 0, preview.stderr);
    const digest = digestOf(preview.stdout);
    const cli = startBerth([
      '--state',
      world.state,
      'converge',
      'box',
      '--filter',
      'slowstart',
      '--yes',
      '--digest',
      digest,
    ]);
    const api = post(
      server.port,
      '/converge',
      JSON.stringify({ node: 'box', filter: 'slowstart', yes: true, digest }),
    );
    const [cliEnd, apiAnswer] = await Promise.all([cli.exited, api]);
    const outcomes = [
      { done: cliEnd.code === 0, refused: cli.stderr(), code: cliEnd.code },
      {
        done: apiAnswer.status === 200,
        refused: apiAnswer.status === 200 ? '' : JSON.parse(apiAnswer.body).refused,
        code: apiAnswer.status,
      },
    ];
    assert.equal(outcomes.filter((o) => o.done).length, 1, JSON.stringify(outcomes));
    const second = outcomes.find((o) => !o.done);
    assert.ok(second);
    assert.ok(second.code === 1 || second.code === 409, JSON.stringify(outcomes));
    assert.match(
      second.refused,
      /^(waiting for the lock of box, held by .*\n)?the preview changed since digest [0-9a-f]{12}…: berth now manages slowstart on box; preview again/,
    );
    const started = journalLines(world.state).then((lines) =>
      lines.filter((line) => line.act === 'converge' && line.outcome === 'done'),
    );
    assert.equal((await started).length, 1, 'the start hook ran once');
  });
});
