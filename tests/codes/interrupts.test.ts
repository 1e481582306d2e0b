/**
 * interrupted: berth told to stop while an act runs a hook — Ctrl-C on the command line,
 * `berth api` told to stop with an act still running at its close deadline — for one node
 * and for a group. The hook stopped is the act interrupted, not a hook that failed.
 */
import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { httpAsk } from '../helpers/api-process.ts';
import { startBerth } from '../helpers/reliability.ts';
import { until } from '../helpers/safety.ts';
import { type Body, bodyOf, codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('interrupts');

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('an act told to stop while its hook runs', () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      modules: {
        slow: {
          description: 'a start that takes 60 s',
          start: 'touch "$BERTH_ROOT/begun"; sleep 60',
        },
      },
      nodes: ['c1', 'c2', 'c3', 'a1', 'a2', 'a3'],
      settings: { groups: { line: ['c2', 'c3'], served: ['a2', 'a3'] } },
    });
    for (const node of ['c1', '@line', 'a1', '@served'])
      assert.equal((await faces.world.berth('assign', node, 'slow')).code, 0);
  });
  after(() => faces?.close());

  const digestOf = async (node: string) =>
    (await faces.line('converge', { node })).body.digest as string;
  const begun = (nodes: string[]) => () =>
    Promise.all(nodes.map((node) => exists(join(faces.rootOf(node), 'begun')))).then((all) =>
      all.every(Boolean),
    );

  it('Ctrl-C on the command line: exit 1, interrupted, for a node and for a group', async () => {
    for (const [scope, target, nodes] of [
      ['node', 'c1', ['c1']],
      ['group', '@line', ['c2', 'c3']],
    ] as const) {
      const digest = await digestOf(target);
      const act = startBerth([
        '--state',
        faces.world.state,
        'converge',
        target,
        '--yes',
        '--digest',
        digest,
        '--json',
      ]);
      await until(begun([...nodes]), `the start hooks of ${target} began`);
      act.child.kill('SIGINT');
      const end = await act.exited;
      assert.equal(end.code, 1, act.stderr());
      const answer = { status: 1, body: bodyOf({ code: 1, stdout: act.stdout(), stderr: '' }) };
      codes.refused(`cli ${scope}`, answer, 'interrupted', [...nodes]);
      assert.match(answer.body.refused ?? '', /berth was interrupted by SIGINT/);
    }
  });

  it('berth api told to stop, an act still running at its deadline: 409, interrupted', async () => {
    const acts = (['a1', '@served'] as const).map(async (node) => {
      const digest = await digestOf(node);
      const answer = await httpAsk(faces.api.url, {
        path: '/converge',
        body: JSON.stringify({ node, yes: true, digest }),
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${await faces.token('ops')}`,
        },
      });
      return { status: answer.status, body: (answer.body ?? {}) as Body };
    });
    await until(begun(['a1', 'a2', 'a3']), 'the start hooks began');
    faces.api.child.kill('SIGTERM');
    const [one, group] = await Promise.all(acts);
    assert.equal((await faces.api.exited).code, 0);
    for (const [scope, answer, nodes] of [
      ['node', one, ['a1']],
      ['group', group, ['a2', 'a3']],
    ] as const) {
      assert.equal(answer?.status, 409);
      codes.refused(`api ${scope}`, answer as { status: number; body: Body }, 'interrupted', [
        ...nodes,
      ]);
      assert.match(answer?.body.refused ?? '', /berth api closed before the act ended/);
    }
  });
});

codes.finally();
