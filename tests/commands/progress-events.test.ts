/**
 * An act tells its progress as one stream of typed events, through the runner both faces
 * use: the target's nodes first, then where each node stands, each step done, each hook
 * begun and each line it wrote, as the node wrote it and cleared of secrets, and how each
 * node ended. Values, not berth's words: the command line makes its words of them (the
 * words themselves are held by targets-progress.test.ts and the command line's tests).
 * On rooted nodes, with the file stores.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileDeps } from '../../src/cli/deps.ts';
import { openAct } from '../../src/commands/act.ts';
import type { Face } from '../../src/commands/act-shapes.ts';
import { planDigest } from '../../src/commands/plan-records.ts';
import type { ProgressEvent } from '../../src/commands/progress-events.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { answerOf } from '../../src/words/answer.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const APP = {
  description: 'an app that prints its secret as it starts',
  secrets: { k: { path: '/etc/app/k' } },
  files: { '/etc/app/app.conf': { content: 'port 80\n' } },
  start: 'echo "up on $BERTH_NODE"; cat "$BERTH_ROOT/etc/app/k"; echo',
};
const BEAT = { description: 'a hook alone', start: 'echo beat' };

/** The events of one node, each as a short value: its kind, and a step's `do`. */
function ofNode(events: readonly ProgressEvent[], node: string): string[] {
  return events.flatMap((event) => {
    if (event.kind === 'ended') return event.end.node === node ? [`ended ${event.end.how}`] : [];
    if (!('node' in event) || event.node !== node) return [];
    return [event.kind === 'step' ? `step ${event.told.step.do}` : event.kind];
  });
}

describe('progress, as one stream of typed events', () => {
  let world: World;

  /** A converge of `target` through the runner, every event it told kept in order. */
  async function converge(target: string, digest?: string, face: Partial<Face> = {}) {
    const events: ProgressEvent[] = [];
    const opened = await openAct(
      shapeOf('converge'),
      { node: target, module: '', yes: digest !== undefined, digest },
      fileDeps({ dir: world.state, createIfMissing: false }),
      { actor: 'tester', via: 'cli', line: {}, tell: (event) => events.push(event), ...face },
    );
    if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
    return { answer: answerOf(await opened.run()), events };
  }

  before(async () => {
    world = await makeWorld({ app: APP, beat: BEAT });
    await world.rootedNodes(['web1', 'web2'], { web: ['web1', 'web2'] });
  });
  after(() => world?.cleanup());

  it("tells a target's nodes first, then each node's stages, steps, hooks and lines, and how it ended", async () => {
    assert.equal((await world.berth('assign', '@web', 'app')).code, 0);
    const preview = await converge('@web');
    assert.deepEqual(preview.events[0], { kind: 'target', nodes: ['web1', 'web2'] });
    // A preview surveys: nothing acts, nothing ends.
    for (const node of ['web1', 'web2'])
      assert.deepEqual(ofNode(preview.events, node), ['waiting', 'surveying']);

    const act = await converge('@web', preview.answer.digest);
    assert.equal(act.answer.refused, undefined, act.answer.said);
    assert.deepEqual(act.events[0], { kind: 'target', nodes: ['web1', 'web2'] });
    for (const node of ['web1', 'web2']) {
      assert.deepEqual(ofNode(act.events, node), [
        'waiting',
        'surveying',
        'acting',
        'step manage',
        'step mint',
        'step write',
        'hook-started',
        'hook-line',
        'hook-line',
        'step start',
        'ended done',
      ]);
      const mine = act.events.filter((event) => 'node' in event && event.node === node);
      // The count the act is told against is its plan's, as the target's check made it.
      const acting = mine.find((event) => event.kind === 'acting');
      assert.deepEqual(acting, { kind: 'acting', node, steps: 4 });
      assert.deepEqual(
        mine.find((event) => event.kind === 'hook-started'),
        { kind: 'hook-started', node, module: 'app', hook: 'start' },
      );
      // A hook's lines are the node's own, cleared of secrets: no words of berth's around them.
      const lines = mine.flatMap((event) => (event.kind === 'hook-line' ? [event.line] : []));
      assert.deepEqual(lines, [`up on ${node}`, '[secret k of app]']);
      const secret = (await readFile(join(world.rootOf(node), 'etc/app/k'), 'utf8')).trim();
      assert.ok(secret.length >= 16);
      assert.equal(JSON.stringify(act.events).includes(secret), false);
      // Each step is the engine's own value, and the same as the answer says it did.
      const steps = mine.flatMap((event) => (event.kind === 'step' ? [event.told.step] : []));
      assert.deepEqual(
        steps.map((step) => step.do),
        act.answer.nodes?.[node]?.steps.map((step) => step.kind),
      );
    }
    const ends = act.events.flatMap((event) => (event.kind === 'ended' ? [event.end] : []));
    assert.deepEqual(ends.map((end) => [end.node, end.how, end.outcome.refusal]).sort(), [
      ['web1', 'done', undefined],
      ['web2', 'done', undefined],
    ]);
  });

  it('tells a node alone the same events: how to show a target of one is the face’s', async () => {
    assert.equal((await world.berth('assign', 'web1', 'beat')).code, 0);
    const preview = await converge('web1');
    const act = await converge('web1', preview.answer.digest);
    assert.equal(act.answer.refused, undefined, act.answer.said);
    assert.deepEqual(act.events[0], { kind: 'target', nodes: ['web1'] });
    assert.deepEqual(ofNode(act.events, 'web1'), [
      'waiting',
      'acting',
      'step manage',
      'hook-started',
      'hook-line',
      'step start',
      'ended done',
    ]);
    // A node alone plans within its act: no count is told that is not its plan's.
    const acting = act.events.find((event) => event.kind === 'acting');
    assert.ok(acting?.kind === 'acting');
    assert.equal(acting.steps, undefined);
    assert.deepEqual(
      act.events.find((event) => event.kind === 'hook-line'),
      { kind: 'hook-line', node: 'web1', line: 'beat' },
    );
  });

  it('tells a plan file checked before any node acts, and not when the file is refused', async () => {
    await world.berth('unassign', '@web', 'beat');
    await world.writeModule('beat', { ...BEAT, start: 'echo beat again' });
    assert.equal((await world.berth('assign', '@web', 'beat')).code, 0);
    const content = { plan: 'as the command line would write it' };
    const preview = await converge('@web', undefined, { writingPlan: () => content });
    const asked = {
      digest: await planDigest(content),
      file: 'plan.json',
      madeWith: world.state,
      using: world.state,
    };
    const act = await converge('@web', preview.answer.digest, { actingOnPlan: asked });
    assert.equal(act.answer.refused, undefined, act.answer.said);
    const kinds = act.events.map((event) => event.kind);
    const checked = kinds.indexOf('plan-checked');
    assert.deepEqual(act.events[checked], { kind: 'plan-checked', file: 'plan.json' });
    assert.ok(
      checked > kinds.lastIndexOf('waiting') && checked < kinds.indexOf('acting'),
      `${kinds}`,
    );

    const again = await converge('@web', preview.answer.digest, { actingOnPlan: asked });
    assert.equal(again.answer.code, 'plan_acted_on');
    assert.deepEqual(
      again.events.map((event) => event.kind),
      ['target', 'waiting', 'waiting'],
    );
  });
});
