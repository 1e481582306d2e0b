/**
 * `--full-diff` chooses how much of each file's diff a preview shows, never what a command
 * returns: a converge preview's typed result holds every diff whole and no such choice,
 * the one renderer cuts it or not as the edge asks, and the command line asks from its
 * option, in its words, `--json` and a plan file alike, under the same digest.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileDeps } from '../../src/cli/deps.ts';
import { openAct } from '../../src/commands/act.ts';
import type { RunOutcome } from '../../src/commands/outcome.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { saidOf } from '../../src/words/said.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

/** A file of 60 settings, each written otherwise on the nodes: a diff of 120 changed lines. */
const LONG = Array.from({ length: 60 }, (_, i) => `setting${i}=${i}`).join('\n');
const CUT = /… \d+ more lines of diff \(--full-diff shows them all\)/;

/** Whether `text` shows the whole diff of long.conf: every line removed and added. */
function wholeDiff(text: string): boolean {
  return Array.from({ length: 60 }, (_, i) => i).every(
    (i) => text.includes(`-setting${i} = ${i}\n`) && text.includes(`+setting${i}=${i}\n`),
  );
}

describe('--full-diff is the command line showing a preview, not a command returning one', () => {
  let world: World;

  /** A converge preview through the runner both faces use, as the command line opens it. */
  async function preview(node: string): Promise<RunOutcome> {
    const opened = await openAct(
      shapeOf('converge'),
      { node, module: '', yes: false },
      fileDeps({ dir: world.state, createIfMissing: false }),
      { actor: 'tester', via: 'cli', line: {} },
    );
    if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
    return opened.run();
  }

  before(async () => {
    world = await makeWorld({ long: { files: { '/etc/long.conf': { content: `${LONG}\n` } } } });
    await world.rootedNodes(['web1', 'web2'], { web: ['web1', 'web2'] });
    for (const node of ['web1', 'web2']) {
      assert.equal((await world.berth('assign', node, 'long')).code, 0);
      const shown = await world.berth('converge', node);
      assert.equal((await world.actOn(shown, 'converge', node)).code, 0);
      // Both nodes' file edited alike by hand: one diff, the same on each.
      await writeFile(`${world.rootOf(node)}/etc/long.conf`, `${LONG.replaceAll('=', ' = ')}\n`);
    }
  });
  after(() => world?.cleanup());

  it("returns each file's diff whole, and the renderer cuts it or not as asked", async () => {
    const outcome = await preview('web1');
    const { result } = outcome;
    assert.ok(result?.command === 'converge' && 'preview' in result, saidOf(outcome));
    assert.ok(!('fullDiff' in result.preview), 'a preview carries no choice of how it is shown');
    const write = result.preview.plan.modules[0]?.steps.find((step) => step.do === 'write');
    assert.ok(write?.do === 'write' && write.why.because === 'differs');
    assert.ok(wholeDiff(`${write.why.diff.join('\n')}\n`), 'the diff, as data, is whole');

    const cut = saidOf(outcome);
    assert.match(cut, CUT);
    assert.ok(!wholeDiff(cut));
    const whole = saidOf(outcome, { fullDiff: true });
    assert.ok(wholeDiff(whole), whole);
    assert.doesNotMatch(whole, CUT);
    assert.equal(digestOf(whole), digestOf(cut));
  });

  it("shows a target's shared diff once, cut or whole as asked, from a target run that holds no choice", async () => {
    const outcome = await preview('@web');
    assert.ok(outcome.several, 'a target of two nodes');
    assert.ok(
      !('fullDiff' in outcome.several),
      'a target run carries no choice of how it is shown',
    );
    const cut = saidOf(outcome);
    const whole = saidOf(outcome, { fullDiff: true });
    for (const said of [cut, whole]) {
      assert.match(said, /^the same diff on several nodes:\nweb1, web2: \/etc\/long\.conf$/m);
      assert.equal(said.match(/-setting0 = 0\n/g)?.length, 1, 'the diff is shown once');
    }
    assert.match(cut, CUT);
    assert.ok(wholeDiff(whole), whole);
    assert.doesNotMatch(whole, CUT);
    assert.equal(digestOf(whole), digestOf(cut));
  });

  it('the command line shows the whole diff with --full-diff in its words, --json and a plan file, under the same digest', async () => {
    const cut = await world.berth('converge', '@web');
    const whole = await world.berth('converge', '@web', '--full-diff');
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(cut.stdout, CUT);
    assert.ok(wholeDiff(whole.stdout), whole.stdout);
    assert.doesNotMatch(whole.stdout, CUT);
    assert.equal(digestOf(whole.stdout), digestOf(cut.stdout));

    const json = JSON.parse((await world.berth('converge', 'web1', '--json')).stdout);
    const jsonWhole = JSON.parse(
      (await world.berth('converge', 'web1', '--json', '--full-diff')).stdout,
    );
    assert.match(json.said, CUT);
    assert.ok(wholeDiff(jsonWhole.said), jsonWhole.said);
    assert.equal(jsonWhole.digest, json.digest);

    const file = join(world.dir, 'web1.plan');
    const written = await world.berth('converge', 'web1', '--out', file, '--full-diff');
    assert.equal(written.code, 0, written.stderr);
    const plan = JSON.parse(await readFile(file, 'utf8'));
    assert.ok(wholeDiff(plan.preview.said), plan.preview.said);
    assert.equal(plan.digest, json.digest);
    const acted = await world.berth('act', file);
    assert.equal(acted.code, 0, acted.stderr);
    assert.ok(wholeDiff(acted.stdout), 'the act shows the plan as it was written');
    assert.equal(await readFile(`${world.rootOf('web1')}/etc/long.conf`, 'utf8'), `${LONG}\n`);
  });
});
