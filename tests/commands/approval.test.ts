/**
 * `--yes` without `--digest` at a terminal: the preview, then a question; `yes` acts on
 * exactly the preview shown, anything else does nothing. Driven through the real binary
 * in a pseudo-terminal, typing as an operator does.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthAtTerminal } from '../helpers/terminal.ts';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';

const QUESTION = 'act on this preview of box? type yes: ';

describe('approval at a terminal', () => {
  let world: World;
  const conf = () => join(world.root, 'etc/postgres/pg.conf');
  const converges = async () =>
    (await world.journal()).filter((entry) => entry.act === 'converge').length;

  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.berth('assign', 'box', 'postgres');
  });
  after(() => world.cleanup());

  /** converge box --yes at a terminal, answered with `typed` once the question is shown. */
  const answered = async (typed: string | 'end of input') => {
    const terminal = berthAtTerminal(world.state, ['converge', 'box', '--yes']);
    await terminal.shown(QUESTION);
    if (typed === 'end of input') terminal.endInput();
    else terminal.type(typed);
    return terminal.ended;
  };

  it('a plain preview never asks', async () => {
    const terminal = berthAtTerminal(world.state, ['converge', 'box']);
    terminal.endInput();
    const { code, shown } = await terminal.ended;
    assert.equal(code, 0, shown);
    assert.match(shown, /install postgres:\n/);
    assert.doesNotMatch(shown, /type yes/);
  });

  for (const typed of ['no\n', 'end of input', '\x03'] as const) {
    it(`answered ${JSON.stringify(typed)}: nothing is done, exit 1`, async () => {
      const { code, shown } = await answered(typed);
      assert.equal(code, 1, shown);
      // The preview whole, then the question, then that nothing was done.
      assert.match(shown, /^converge box\ninstall postgres:\n[\s\S]*\ndigest [0-9a-f]{64}\nact on/);
      assert.match(shown, /nothing was done: only yes acts on the preview\n$/);
      assert.equal(existsSync(conf()), false);
      assert.equal(existsSync(join(world.root, 'started-postgres')), false);
      assert.equal(await converges(), 0);
    });
  }

  it('answered yes: acts on that preview, step by step', async () => {
    const { code, shown } = await answered('yes\n');
    assert.equal(code, 0, shown);
    assert.match(
      shown,
      /act on this preview of box\? type yes: yes\n[\s\S]*wrote \/etc\/postgres\/pg.conf\n/,
    );
    assert.match(shown, /box is as assigned\n$/);
    assert.equal(existsSync(join(world.root, 'started-postgres')), true);
    const acts = (await world.journal()).filter((entry) => entry.act === 'converge');
    assert.deepEqual(
      acts.map((entry) => entry.outcome),
      ['done'],
    );
  });

  it('the node changed between the preview shown and yes: refused, naming the change', async () => {
    await writeFile(conf(), 'password=by hand\n');
    const terminal = berthAtTerminal(world.state, ['converge', 'box', '--yes']);
    await terminal.shown(QUESTION);
    // Someone edits the file while the operator reads the preview.
    await writeFile(conf(), 'password=by another hand\n');
    terminal.type('yes\n');
    const { code, shown } = await terminal.ended;
    assert.equal(code, 1, shown);
    assert.match(
      shown,
      /the preview changed since digest [0-9a-f]{12}…: file \/etc\/postgres\/pg.conf changed on box; preview again\n$/,
    );
    assert.equal(await readFile(conf(), 'utf8'), 'password=by another hand\n');
  });

  it('--json at a terminal does not ask: --yes without a digest is refused as elsewhere', async () => {
    const terminal = berthAtTerminal(world.state, ['converge', 'box', '--yes', '--json']);
    terminal.endInput();
    const { code, shown } = await terminal.ended;
    assert.equal(code, 1, shown);
    assert.doesNotMatch(shown, /type yes/);
    assert.match(shown, /a converge acts on a preview/);
  });
});

describe('approval of a target at a terminal', () => {
  let world: World;
  const rootOf = (node: string) => world.rootOf(node);
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.rootedNodes(['db1', 'db2'], { db: ['db1', 'db2'] });
    await world.berth('assign', '@db', 'postgres');
  });
  after(() => world.cleanup());

  it('asks once for every node of the preview, and yes acts on each', async () => {
    const terminal = berthAtTerminal(world.state, ['converge', '@db', '--yes']);
    await terminal.shown('act on this preview of 2 nodes? type yes: ');
    terminal.type('yes\n');
    const { code, shown } = await terminal.ended;
    assert.equal(code, 0, shown);
    assert.match(shown, /recap of converge @db:\n {2}db1: install postgres \(\d+ steps\)\n/);
    assert.match(shown, /2 of 2 nodes done\n$/);
    for (const node of ['db1', 'db2'])
      assert.equal(existsSync(join(rootOf(node), 'started-postgres')), true, node);
  });

  for (const target of ['db1', '@db'])
    it(`converge ${target} --refresh --yes is refused before anything runs: no refresh, no question`, async () => {
      const before = await world.journal();
      const terminal = berthAtTerminal(world.state, ['converge', target, '--refresh', '--yes']);
      terminal.endInput();
      const { code, shown } = await terminal.ended;
      assert.equal(code, 1, shown);
      assert.equal(
        shown,
        `--refresh refreshes the package lists before a preview: preview with it (berth converge ${target} --refresh), then act on that preview's digest\n`,
      );
      const after = (await world.journal()).slice(before.length);
      assert.deepEqual(
        after.map(({ act, node, outcome }) => ({ act, node, outcome })),
        [{ act: 'converge', node: target, outcome: 'refused' }],
        'no refresh was journaled: none ran',
      );
    });
});
