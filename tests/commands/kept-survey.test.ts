/**
 * Every converge preview of whole nodes, whoever makes it, is kept as each node's newest
 * survey, so that a reader of the fleet (berth view) shows it without surveying again: its
 * typed part, and its words with each file's whole diff however the command line showed it.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { fileStores } from '../../src/stores/file-store.ts';
import { surveyShown } from '../../src/words/kept-survey.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

/** A file of 60 settings, every one of them changed on the node: a diff past 40 lines. */
const LONG = Array.from({ length: 60 }, (_, i) => `setting${i}=${i}`).join('\n');

describe("a converge preview is each node's newest survey", () => {
  let world: World;
  /** The kept surveys, in the words the view shows them in. */
  const surveys = async (nodes?: string[]) =>
    (await fileStores({ dir: world.state, createIfMissing: false }).readSurveys(nodes)).map(
      surveyShown,
    );

  before(async () => {
    world = await makeWorld({
      long: { files: { '/etc/long.conf': { content: `${LONG}\n` } } },
    });
    await world.rootedNodes(['web1', 'web2'], { web: ['web1', 'web2'] });
    for (const node of ['web1', 'web2']) {
      assert.equal((await world.berth('assign', node, 'long')).code, 0);
      const preview = await world.berth('converge', node);
      assert.equal((await world.actOn(preview, 'converge', node)).code, 0);
    }
    await world.berth('converge', '@web');
  });
  after(() => world?.cleanup());

  it('keeps the preview of a node alone with its digest, steps and whole diff, by whom', async () => {
    await writeFile(`${world.rootOf('web1')}/etc/long.conf`, `${LONG.replaceAll('=', ' = ')}\n`);
    const preview = await world.berth('converge', 'web1');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /lines not shown|more lines|--full-diff/, 'the terminal shows 40');
    const [survey] = await surveys(['web1']);
    assert.equal(survey?.actor, userInfo().username);
    assert.equal(survey?.via, 'cli');
    assert.equal(survey?.report.digest, digestOf(preview.stdout));
    assert.equal(survey?.report.outcome, 'previewed');
    assert.deepEqual(
      survey?.report.steps.map((step) => `${step.kind} ${step.path ?? step.module}`),
      ['write /etc/long.conf', 'reload long'],
    );
    for (let i = 0; i < 60; i++) {
      assert.ok(survey?.said.includes(`    -setting${i} = ${i}\n`), `line ${i} removed`);
      assert.ok(survey?.said.includes(`    +setting${i}=${i}\n`), `line ${i} added`);
    }
    assert.ok(Date.now() - Date.parse(survey?.at ?? '') < 60_000);
  });

  it('keeps each node of a target, and nothing of a preview of one module alone or of an act', async () => {
    const before = await surveys();
    const group = await world.berth('converge', '@web');
    assert.equal(group.code, 0, group.stderr);
    const after = await surveys();
    assert.deepEqual(
      after.map((survey) => survey.node),
      ['web1', 'web2'],
    );
    for (const [index, survey] of after.entries())
      assert.ok(survey.at > (before[index]?.at ?? ''), `${survey.node} surveyed anew`);
    await world.berth('converge', 'web1', '--filter', 'long');
    const preview = await world.berth('converge', 'web2');
    assert.equal((await world.actOn(preview, 'converge', 'web2')).code, 0);
    const [web1, web2] = await surveys();
    assert.deepEqual(web1, after[0], 'a filtered preview is not the whole node');
    assert.equal(web2?.report.digest, digestOf(preview.stdout), 'the act kept none of its own');
  });
});
