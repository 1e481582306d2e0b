/**
 * The typed result of every command, on both faces: `--json` through the real binary and
 * the Command API's answer are the same object — `said` and `refused` (docs/api.md) with
 * `format_version`, a preview's `digest`, and the node's digest, steps, blockers and
 * outcome — so that a script reads what happened without parsing `said`.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import * as v from 'valibot';
import { type CommandAnswer, CommandAnswerSchema } from '../../src/model/result.ts';
import { appOver, post } from '../helpers/api.ts';
import { untimed } from '../helpers/timed.ts';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';

interface Request {
  node: string;
  module?: string;
  filter?: string;
  yes?: boolean;
  digest?: string;
}

/** A command on one face: whether it was done (exit 0 / 200), and its answer, checked. */
type Face = (command: string, request: Request) => Promise<{ ok: boolean; answer: CommandAnswer }>;

function commandLine(world: World): Face {
  return async (command, request) => {
    const args = [command, request.node, ...(request.module ? [request.module] : [])];
    if (request.filter) args.push('--filter', request.filter);
    if (request.yes) args.push('--yes');
    if (request.digest) args.push('--digest', request.digest);
    const run = await world.berth(...args, '--json');
    assert.equal(run.stdout.trim().split('\n').length, 1, 'one JSON object, on one line');
    const json = JSON.parse(run.stdout);
    return { ok: run.code === 0, answer: strict(json) };
  };
}

function commandApi(world: World): Face {
  const app = appOver(world.state);
  return async (command, request) => {
    const answer = await post(app, `/${command}`, request);
    assert.ok(answer.status === 200 || answer.status === 409, `status ${answer.status}`);
    return { ok: answer.status === 200, answer: strict(answer.body) };
  };
}

/** The answer as the schema has it, and nothing beside it. */
function strict(json: unknown): CommandAnswer {
  const answer = v.parse(CommandAnswerSchema, json);
  assert.deepEqual(Object.keys(json as object).sort(), Object.keys(answer).sort());
  return untimed(answer);
}

const DIGEST = /^[0-9a-f]{64}$/;
const kinds = (answer: CommandAnswer) =>
  answer.nodes.box?.steps.map((step) => `${step.kind} ${step.module} ${step.path ?? ''}`.trim());

for (const [faceName, makeFace] of [
  ['--json on the command line', commandLine],
  ['the Command API', commandApi],
] as const) {
  describe(`typed results: ${faceName}`, () => {
    let world: World;
    let berth: Face;
    beforeEach(async () => {
      world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
      berth = makeFace(world);
    });
    afterEach(() => world.cleanup());

    it('assign, unassign and adopt: their words, and the node reached with its outcome', async () => {
      const assigned = await berth('assign', { node: 'box', module: 'postgres' });
      assert.deepEqual(assigned, {
        ok: true,
        answer: {
          format_version: 1,
          said: 'box is to run postgres',
          nodes: { box: { steps: [], blockers: [], outcome: 'done' } },
        },
      });
      const again = await berth('unassign', { node: 'box', module: 'gitea' });
      assert.equal(again.ok, false);
      assert.equal(again.answer.refused, 'box is not to run gitea; there is nothing to unassign');
      assert.equal(again.answer.code, 'not_assigned');
      assert.equal(again.answer.nodes.box?.outcome, 'refused');
      assert.equal(again.answer.nodes.box?.code, 'not_assigned');
      const adopted = await berth('adopt', { node: 'box' });
      assert.equal(adopted.ok, true);
      assert.match(adopted.answer.said, /^account of box, taken /);
      assert.equal(adopted.answer.nodes.box?.outcome, 'done');
      const unknown = await berth('adopt', { node: 'nowhere' });
      assert.deepEqual(unknown, {
        ok: false,
        answer: {
          format_version: 1,
          said: '',
          refused: 'berth does not know node nowhere; add it under nodes in berth.json',
          code: 'unknown_node',
          nodes: {},
        },
      });
    });

    it('converge: a preview with its digest and steps, the act with the steps done', async () => {
      await berth('assign', { node: 'box', module: 'postgres' });
      const preview = await berth('converge', { node: 'box' });
      assert.equal(preview.ok, true);
      const { digest } = preview.answer;
      assert.match(digest ?? '', DIGEST);
      assert.equal(preview.answer.nodes.box?.digest, digest);
      assert.ok(preview.answer.said.endsWith(`\ndigest ${digest}`));
      assert.equal(preview.answer.nodes.box?.outcome, 'previewed');
      const planned = [
        'manage postgres',
        'mkdir postgres /var/lib/postgresql',
        'mint postgres /etc/postgres/password',
        'write postgres /etc/postgres/pg.conf',
        'start postgres',
      ];
      assert.deepEqual(kinds(preview.answer), planned);
      assert.equal(preview.answer.nodes.box?.steps[2]?.secret, 'password');

      const done = await berth('converge', { node: 'box', yes: true, digest });
      assert.equal(done.ok, true, done.answer.refused);
      assert.equal(done.answer.digest, undefined, 'an act is not a preview');
      assert.equal(done.answer.nodes.box?.digest, digest, 'the preview it acted on');
      assert.equal(done.answer.nodes.box?.outcome, 'done');
      assert.deepEqual(kinds(done.answer), planned);
      assert.match(done.answer.said, /\nbox is as assigned$/);

      const stale = await berth('converge', { node: 'box', yes: true, digest });
      assert.equal(stale.ok, false);
      assert.match(stale.answer.refused ?? '', /^the preview changed since digest /);
      assert.equal(stale.answer.code, 'digest_stale');
      assert.equal(stale.answer.nodes.box?.outcome, 'refused');
    });

    it('converge: blockers as kinds a script can match, and the act refused while they stand', async () => {
      await world.onBox('/var/lib/gitea/repo', 'held by hand');
      await berth('assign', { node: 'box', module: 'postgres' });
      await berth('assign', { node: 'box', module: 'gitea' });
      const preview = await berth('converge', { node: 'box', filter: 'gitea' });
      assert.equal(preview.ok, true, 'a preview with blockers is still a preview');
      assert.deepEqual(preview.answer.nodes.box?.blockers, [
        {
          code: 'needs_not_running',
          kind: 'needs-not-running',
          module: 'gitea',
          words:
            'gitea needs postgres, which berth does not run on box yet: converge box --filter postgres first, or converge box as a whole',
        },
      ]);
      const whole = await berth('converge', { node: 'box' });
      assert.deepEqual(
        whole.answer.nodes.box?.blockers.map((blocker) => [blocker.kind, blocker.module]),
        [['held-not-managed', 'gitea']],
      );
      const refused = await berth('converge', {
        node: 'box',
        yes: true,
        digest: whole.answer.digest as string,
      });
      assert.equal(refused.ok, false);
      assert.match(refused.answer.refused ?? '', /^the act is refused while a blocker stands: /);
      assert.equal(refused.answer.code, 'blocked');
      assert.equal(refused.answer.nodes.box?.blockers[0]?.code, 'held_not_managed');
      assert.equal(refused.answer.nodes.box?.outcome, 'refused');
      assert.equal(refused.answer.said, '');
    });

    it('take: the preview lists its steps and refusals; the act keeps, restores or mints, and manages', async () => {
      await world.onBox('/var/lib/postgresql/base', 'rows');
      await world.onBox('/etc/postgres/password', 'hand-made');
      await berth('adopt', { node: 'box' });
      const preview = await berth('take', { node: 'box', module: 'postgres' });
      assert.equal(preview.ok, true);
      assert.match(preview.answer.digest ?? '', DIGEST);
      assert.deepEqual(kinds(preview.answer), [
        'keep postgres /etc/postgres/password',
        'manage postgres',
      ]);
      assert.deepEqual(preview.answer.nodes.box?.blockers, []);
      const done = await berth('take', {
        node: 'box',
        module: 'postgres',
        yes: true,
        digest: preview.answer.digest as string,
      });
      assert.equal(done.ok, true, done.answer.refused);
      assert.equal(done.answer.nodes.box?.outcome, 'done');
      assert.deepEqual(kinds(done.answer), kinds(preview.answer));
      assert.match(
        done.answer.said,
        /^secret password: read into the vault from \/etc\/postgres\/password\n/,
      );
    });

    it('take: a refusal the act would meet is a blocker of the preview', async () => {
      await world.onBox('/var/lib/postgresql/base', 'rows');
      await berth('adopt', { node: 'box' });
      const preview = await berth('take', { node: 'box', module: 'postgres' });
      assert.deepEqual(
        preview.answer.nodes.box?.blockers.map((blocker) => blocker.kind),
        ['mint-over-data'],
      );
      const refused = await berth('take', {
        node: 'box',
        module: 'postgres',
        yes: true,
        digest: preview.answer.digest as string,
      });
      assert.equal(refused.ok, false);
      assert.equal(refused.answer.refused, preview.answer.nodes.box?.blockers[0]?.words);
      assert.equal(refused.answer.code, 'mint_over_data');
    });
  });
}

describe('the command line alone', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('forget --json: the typed result', async () => {
    await world.berth('assign', 'box', 'postgres');
    const preview = JSON.parse((await world.berth('converge', 'box', '--json')).stdout);
    await world.berth('converge', 'box', '--yes', '--digest', preview.digest);
    await world.berth('unassign', 'box', 'postgres');
    const forgot = await world.berth('forget', 'box', 'postgres', '--json');
    assert.equal(forgot.code, 0, forgot.stdout);
    const answer = strict(JSON.parse(forgot.stdout));
    assert.equal(answer.nodes.box?.outcome, 'done');
    assert.match(answer.said, /postgres/);
  });

  it('--detailed-exitcode: 0 nothing to do, 2 something and nothing blocks, 1 a blocker', async () => {
    const exit = async (...args: string[]) =>
      (await world.berth(...args, '--detailed-exitcode')).code;
    assert.equal(await exit('converge', 'box'), 0);
    await world.berth('assign', 'box', 'postgres');
    assert.equal(await exit('converge', 'box'), 2);
    await world.onBox('/var/lib/gitea/repo', 'held by hand');
    await world.berth('assign', 'box', 'gitea');
    assert.equal(await exit('converge', 'box'), 1);
    assert.equal(await exit('converge', 'box', '--filter', 'postgres'), 2);
    await world.berth('adopt', 'box');
    assert.equal(await exit('take', 'box', 'gitea'), 1, 'a take that would mint over data');
    const json = await world.berth('converge', 'box', '--json', '--detailed-exitcode');
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).nodes.box.blockers[0].kind, 'held-not-managed');
    // Without it a preview is exit 0, blockers or not, as before.
    assert.equal((await world.berth('converge', 'box')).code, 0);
  });
});
