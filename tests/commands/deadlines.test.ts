/**
 * Every hook and check has a deadline: a definition's `timeout`, 30 s when it names none.
 * The service's own user decides whether its check answers; one that never does is
 * stopped at its deadline with all it started, the preview says so, and the node's lock
 * is let go for the next command. A start that never ends fails the act in those words.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type Faces, openFaces } from '../codes/faces.ts';
import { digestOf, type World } from '../helpers/world.ts';

const run = promisify(execFile);

/** Seconds no other test sleeps, so that ps tells this file's sleeps from any other's. */
const LONG = 40_000 + (process.pid % 9_000) * 2;

/** The processes this file's hooks left sleeping, as ps lists them; empty when none. */
async function sleeping(): Promise<string> {
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`sleep ${LONG}`))
    .join('\n');
}

/** A service whose check its user has made hang: it ignores SIGTERM and never answers. */
const STUCK = {
  description: 'a service whose check never answers',
  start: 'touch "$BERTH_ROOT/running"',
  check: `echo asking the health endpoint; trap '' TERM; sleep ${LONG} & sleep ${LONG + 1}`,
  timeout: '2s',
};

describe('deadlines of hooks and checks, on a rooted node', () => {
  let faces: Faces;
  let world: World;
  before(async () => {
    faces = await openFaces({
      modules: { stuck: STUCK, other: { description: 'another module' } },
      nodes: ['web1'],
    });
    world = faces.world;
    assert.equal((await world.berth('assign', 'web1', 'stuck')).code, 0);
    // Started once: a converge preview runs the check of a module berth runs.
    const preview = await world.berth('converge', 'web1');
    const act = await world.berth(
      'converge',
      'web1',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(act.code, 0, act.stderr);
  });
  after(async () => {
    await run('pkill', ['-KILL', '-f', `sleep ${LONG}`]).catch(() => {});
    await faces?.close();
  });

  it('a check that never answers: the preview ends at its timeout saying so, nothing of it is left, and a command waiting on the lock gets it', {
    timeout: 60_000,
  }, async () => {
    const began = performance.now();
    const preview = world.berth('converge', 'web1');
    // Another command, begun while the check holds the node's lock, waits for it.
    await new Promise((wake) => setTimeout(wake, 500));
    const waiting = world.berth('assign', 'web1', 'other', '--lock-timeout', '15s');
    const shown = await preview;
    const took = performance.now() - began;
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /start stuck: its check did not answer within its timeout of 2s, so berth stopped it and all it started \(its last line: asking the health endpoint\); run start: touch/,
    );
    assert.ok(took >= 2_000 && took < 12_000, `the preview took ${took} ms`);
    const assigned = await waiting;
    assert.equal(assigned.code, 0, assigned.stderr);
    assert.equal(await sleeping(), '', 'nothing the check began is left running');

    // --json carries the deadline's code on the start it plans.
    const json = await world.berth('converge', 'web1', '--json');
    const start = JSON.parse(json.stdout).nodes.web1.steps.find(
      (step: { kind: string }) => step.kind === 'start',
    );
    assert.deepEqual(start, { kind: 'start', module: 'stuck', code: 'hook_timeout' });
    assert.equal(await sleeping(), '');

    // status --check says the same of it.
    const status = await world.berth('status', 'web1', '--check');
    assert.match(status.stdout, /check stuck: did not answer within its timeout of 2s/);
    assert.equal(await sleeping(), '');
  });

  it('over the API too: its preview ends at the timeout, and the command line waiting on the lock gets it', {
    timeout: 60_000,
  }, async () => {
    const began = performance.now();
    const served = faces.served('converge', { node: 'web1' });
    await new Promise((wake) => setTimeout(wake, 500));
    const waiting = world.berth('unassign', 'web1', 'other', '--lock-timeout', '15s');
    const answer = await served;
    const took = performance.now() - began;
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.ok(took >= 2_000 && took < 12_000, `the preview took ${took} ms`);
    assert.match(answer.body.said ?? '', /its check did not answer within its timeout of 2s/);
    const node = answer.body.nodes?.web1 as unknown as { steps: { code?: string }[] } | undefined;
    const steps = node?.steps ?? [];
    assert.ok(
      steps.some((step) => step.code === 'hook_timeout'),
      JSON.stringify(steps),
    );
    const unassigned = await waiting;
    assert.equal(unassigned.code, 0, unassigned.stderr);
    assert.equal(await sleeping(), '', 'nothing the check began is left running');
  });

  it('a timeout that is not a duration is refused with words', async () => {
    for (const timeout of ['2', '0s', '25h', '2d', '1w']) {
      await world.writeModule('bad', { description: 'bad', timeout });
      const validate = await world.berth('validate');
      assert.equal(validate.code, 1, `${timeout}: ${validate.stdout}`);
      assert.match(
        validate.stdout + validate.stderr,
        /bad\.json: timeout: a timeout is a duration from 1s to 24h, like "90s", "5m" or "1h"/,
        timeout,
      );
    }
    await world.writeModule('bad', { description: 'bad', timeout: 30 });
    const number = await world.berth('validate');
    assert.match(number.stdout + number.stderr, /bad\.json: timeout: expected a string/);
  });
});
