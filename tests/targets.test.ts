/**
 * Targets on an inventory, and berth.json's groups and grants as the operator meets them:
 * a member that is no node or group, a cycle, a grant on a name berth.json does not have,
 * each makes berth.json not valid, in words, whatever the command.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resolveTarget, targetCovers } from '../src/model/targets.ts';
import { refusalWords } from '../src/words/refusals.ts';
import { makeWorld, type World } from './helpers/world.ts';

const inventory = {
  nodes: ['web1', 'web2', 'web3', 'lb1', 'db1'],
  groups: { web: ['web1', 'web2', 'web3'], edge: ['@web', 'lb1'], none: [] },
};

describe('a target turned into nodes', () => {
  // A refusal as both faces show it: its words, rendered from the typed value, and its code.
  const nodes = (target: string) => {
    const targeted = resolveTarget(target, inventory);
    if (targeted.ok) return targeted;
    const { refusal } = targeted;
    return { ok: false, refused: refusalWords(refusal), code: refusal.code };
  };

  it('takes a node, a group, @all and a list, sorted and once each', () => {
    assert.deepEqual(nodes('web2'), { ok: true, nodes: ['web2'] });
    assert.deepEqual(nodes('@web'), { ok: true, nodes: ['web1', 'web2', 'web3'] });
    assert.deepEqual(nodes('@all'), { ok: true, nodes: ['db1', 'lb1', 'web1', 'web2', 'web3'] });
    assert.deepEqual(nodes('db1,@web,web1'), { ok: true, nodes: ['db1', 'web1', 'web2', 'web3'] });
  });

  it('takes in a group through the groups it names', () => {
    assert.deepEqual(nodes('@edge'), { ok: true, nodes: ['lb1', 'web1', 'web2', 'web3'] });
  });

  it('removes the nodes of ! terms, wherever they stand', () => {
    assert.deepEqual(nodes('@web,!web3'), { ok: true, nodes: ['web1', 'web2'] });
    assert.deepEqual(nodes('!web3,@web'), { ok: true, nodes: ['web1', 'web2'] });
    assert.deepEqual(nodes('@all,!@edge'), { ok: true, nodes: ['db1'] });
  });

  it('refuses, in words, what names no node berth knows', () => {
    assert.deepEqual(nodes('web9'), {
      ok: false,
      refused:
        'berth does not know node web9; did you mean web1? Else add it under nodes in berth.json',
      code: 'unknown_node',
    });
    assert.deepEqual(nodes('@db'), {
      ok: false,
      refused: 'berth.json has no group db',
      code: 'unknown_group',
    });
    assert.deepEqual(nodes('@web,!@web'), {
      ok: false,
      refused: '@web,!@web names no node',
      code: 'invalid_target',
    });
    assert.equal(nodes('@none').ok, false);
    const codeOf = (target: string) => (nodes(target) as { code: string }).code;
    assert.equal(codeOf('!web1'), 'invalid_target');
    assert.equal(codeOf('web1,,web2'), 'invalid_target');
    assert.equal(codeOf('Web1'), 'invalid_name');
    assert.equal(codeOf('web1,@Web'), 'invalid_name');
  });

  it('says whether a target takes in one node, without the rest of the inventory', () => {
    assert.equal(targetCovers('@edge,!web2', 'web1', inventory.groups), true);
    assert.equal(targetCovers('@edge,!web2', 'web2', inventory.groups), false);
    assert.equal(targetCovers('@all', 'db1', inventory.groups), true);
    assert.equal(targetCovers('@web', 'db1', inventory.groups), false);
    assert.equal(targetCovers('@nosuch', 'db1', inventory.groups), false);
  });
});

describe("berth.json's groups and grants, checked where berth.json is read", () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  const refusedWith = async (settings: unknown) => {
    await world.writeSettings(settings);
    const run = await world.berth('assign', 'box', 'app');
    assert.equal(run.code, 1, run.stdout);
    return run.stderr;
  };
  const nodes = () => ({ box: { root: world.root }, lb1: { root: world.root } });

  it('refuses a member that is neither a node nor a group', async () => {
    const words = await refusedWith({ nodes: nodes(), groups: { web: ['box', 'web9'] } });
    assert.match(
      words,
      /is not valid: groups\.web names web9, which is neither a node nor a group/,
    );
  });

  it('refuses a cycle of groups, naming it', async () => {
    const words = await refusedWith({
      nodes: nodes(),
      groups: { a: ['@b'], b: ['box', '@c'], c: ['@a'] },
    });
    assert.match(words, /is not valid: groups\.a takes itself in: @a → @b → @c → @a/);
  });

  it('refuses a group named all, and a grant on what berth.json does not name', async () => {
    assert.match(
      await refusedWith({ nodes: nodes(), groups: { all: ['box'] } }),
      /no group is named all/,
    );
    const grant = await refusedWith({
      nodes: nodes(),
      grants: [{ sub: 'deployer', may: ['converge'], on: '@web' }],
    });
    assert.match(grant, /is not valid: grants\.0\.on: berth\.json has no group web/);
    const may = await refusedWith({
      nodes: nodes(),
      grants: [{ sub: 'deployer', may: ['deploy'], on: 'box' }],
    });
    assert.match(
      may,
      /is not valid: grants\.0\.may\.0: expected "assign" or "unassign" or "take" or "converge" or "adopt" or "\*", got the string "deploy"/,
    );
  });

  it('takes groups and grants that are sound', async () => {
    await world.writeSettings({
      nodes: nodes(),
      groups: { web: ['box'], edge: ['@web', 'lb1'] },
      grants: [{ sub: 'deployer', may: ['*'], on: '@edge,!lb1' }],
    });
    const run = await world.berth('assign', 'box', 'app');
    assert.doesNotMatch(run.stderr, /not valid/);
  });
});
