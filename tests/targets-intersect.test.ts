/**
 * Targets that intersect: `@web&@eu` is the nodes in both (Ansible's `web:&eu`), wherever a
 * target stands — the command line, the Command API's `node`, a grant's `on`, `run` — and
 * a grant on an intersection gives its subject those nodes and nothing of the groups' others.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { grantedTarget } from '../src/model/grants.ts';
import type { Refusal } from '../src/model/refusal.ts';
import { readTarget, resolveTarget, targetCovers } from '../src/model/targets.ts';
import { refusalWords } from '../src/words/refusals.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { makeWorld, type World } from './helpers/world.ts';

const inventory = {
  nodes: ['web1', 'web2', 'web3', 'db1', 'db2'],
  groups: { web: ['web1', 'web2', 'web3'], eu: ['web1', 'web2', 'db1'], db: ['db1', 'db2'] },
};

/** A target's answer as the faces show it: a refusal in its words, with its code. */
function shown<T extends { ok: boolean }>(answer: T | (T & { refusal: Refusal })) {
  if (!('refusal' in answer)) return answer;
  const { refusal, ...rest } = answer;
  return { ...rest, refused: refusalWords(refusal), code: refusal.code };
}

describe('an intersection on an inventory', () => {
  const nodes = (target: string) => shown(resolveTarget(target, inventory));

  it('takes the nodes in every part joined by &, in a list with others and ! parts', () => {
    assert.deepEqual(nodes('@web&@eu'), { ok: true, nodes: ['web1', 'web2'] });
    assert.deepEqual(nodes('@web&@eu&web2'), { ok: true, nodes: ['web2'] });
    assert.deepEqual(nodes('@web&@eu,db2'), { ok: true, nodes: ['db2', 'web1', 'web2'] });
    assert.deepEqual(nodes('@all,!@web&@eu'), { ok: true, nodes: ['db1', 'db2', 'web3'] });
    assert.deepEqual(nodes('@eu&@all'), { ok: true, nodes: ['db1', 'web1', 'web2'] });
  });

  it('refuses, in words, an intersection that names no node or a name berth.json lacks', () => {
    assert.deepEqual(nodes('@web&@db'), {
      ok: false,
      refused: '@web&@db names no node',
      code: 'invalid_target',
    });
    assert.deepEqual(nodes('@web&@ue'), {
      ok: false,
      refused: 'berth.json has no group ue; did you mean @eu?',
      code: 'unknown_group',
    });
    for (const target of ['@web&', '&@eu', '@web&!@eu', '@web&&@eu'])
      assert.deepEqual(nodes(target), {
        ok: false,
        refused: `${JSON.stringify(target)} is not a target: each part is a node, @group or @all, or several joined by & (the nodes in all of them), and ! before a part removes it`,
        code: 'invalid_target',
      });
  });

  it('says whether an intersection takes in one node, without the rest of the inventory', () => {
    assert.equal(targetCovers('@web&@eu', 'web1', inventory.groups), true);
    assert.equal(targetCovers('@web&@eu', 'web3', inventory.groups), false);
    assert.equal(targetCovers('@web&@eu', 'db1', inventory.groups), false);
    assert.equal(targetCovers('@all,!@web&@eu', 'web3', inventory.groups), true);
    assert.equal(targetCovers('@all,!@web&@eu', 'web2', inventory.groups), false);
  });

  it('a grant on an intersection gives those nodes, and names only they and what it names', () => {
    const settings = {
      nodes: Object.fromEntries(inventory.nodes.map((node) => [node, { root: '/' }])),
      groups: inventory.groups,
      grants: [{ sub: 'eu-web', may: ['converge' as const], on: '@web&@eu' }],
    };
    const read = (target: string) =>
      shown(grantedTarget(settings, 'eu-web', 'converge', readTarget(target, inventory)));
    assert.deepEqual(read('@web&@eu'), { ok: true, nodes: ['web1', 'web2'] });
    assert.deepEqual(read('web1'), { ok: true, nodes: ['web1'] });
    assert.deepEqual(read('web3'), {
      ok: false,
      refused: 'eu-web may not converge web3: no grant names it',
      code: 'not_granted',
      byGrants: true,
    });
    // Its groups are not given whole: @web holds web3, which the grant does not give.
    assert.deepEqual(read('@web'), {
      ok: false,
      refused: 'eu-web may not converge @web: no grant names it',
      code: 'not_granted',
      byGrants: true,
    });
  });
});

describe('an intersection on both faces', () => {
  let world: World;
  let api: ServedApiWorld;
  const ask = (subject: string, route: string, body: Record<string, unknown>) =>
    api.ask(route, body, { as: subject });

  before(async () => {
    world = await makeWorld();
    const nodes: Record<string, { root: string }> = {};
    for (const node of inventory.nodes) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    await world.writeModule('app', {
      description: 'an app',
      files: { '/etc/app.conf': { content: 'port 80\n' } },
    });
    await world.writeSettings({
      nodes,
      groups: inventory.groups,
      run: { '@web&@eu': ['app'] },
      grants: [
        { sub: 'eu-web', may: ['converge'], on: '@web&@eu' },
        { sub: 'ops-lead', may: ['*'], on: '@all' },
      ],
    });
    api = await apiWorld({ world });
  });
  after(async () => {
    await api?.close();
    await world.cleanup();
  });

  it('the command line previews, lists and runs what run declares on the nodes in both', async () => {
    const preview = await world.berth('converge', '@web&@eu', '--json');
    assert.equal(preview.code, 0, preview.stderr);
    assert.deepEqual(Object.keys(JSON.parse(preview.stdout).nodes), ['web1', 'web2']);
    const listed = await world.berth('nodes', '@web&@eu');
    assert.deepEqual(
      listed.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('  ')[0]),
      ['web1', 'web2'],
    );
    assert.match(listed.stdout, /to run: app \(berth\.json run\.@web&@eu\)/);
    const web3 = await world.berth('nodes', 'web3');
    assert.match(web3.stdout, /to run: nothing/);
  });

  it("takes an intersection in the API's node field, as its subject's grant on one gives it", async () => {
    const preview = await ask('eu-web', '/converge', { node: '@web&@eu' });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(Object.keys(preview.body?.nodes as object), ['web1', 'web2']);
    const act = await ask('eu-web', '/converge', {
      node: '@web&@eu',
      yes: true,
      digest: preview.body?.digest,
    });
    assert.equal(act.status, 200, act.text);
    assert.match(String(act.body?.said), /2 of 2 nodes done$/);
    const web = await ask('eu-web', '/converge', { node: '@web' });
    assert.equal(web.status, 409);
    assert.equal(web.body?.refused, 'eu-web may not converge @web: no grant names it');
    assert.equal(web.body?.code, 'not_granted');
    const lead = await ask('ops-lead', '/converge', { node: '@eu&@db' });
    assert.equal(lead.status, 200, lead.text);
    assert.deepEqual(Object.keys(lead.body?.nodes as object), ['db1']);
  });
});
