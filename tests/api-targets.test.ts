/**
 * A target in the Command API's `node`, through a real `berth api` and a real socket: a
 * group's converge is answered with the same typed result as the command line's, a target
 * that names no node is the command's refusal (409), and a subject granted part of a
 * target may not act on the whole of it.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import type { World } from './helpers/world.ts';

describe('a target over the Command API', () => {
  let served: ServedApiWorld;
  let world: World;
  const ask = (subject: string, route: string, body: Record<string, unknown>) =>
    served.ask(route, body, { as: subject });

  before(async () => {
    served = await apiWorld({ prepare: readied });
  });
  after(() => served?.close());

  async function readied(made: World) {
    world = made;
    const nodes: Record<string, { root: string }> = {};
    for (const node of ['web1', 'web2', 'db1']) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    await world.writeModule('app', {
      description: 'an app',
      files: { '/etc/app.conf': { content: 'port 80\n' } },
      start: 'touch "$BERTH_ROOT/started"',
    });
    await world.writeSettings({
      nodes,
      groups: { web: ['web1', 'web2'] },
      grants: [
        { sub: 'deployer', may: ['assign', 'converge'], on: '@web' },
        { sub: 'ops-lead', may: ['*'], on: '@all' },
      ],
    });
  }

  it("answers a group's preview and act with the typed result, node by node", async () => {
    const assigned = await ask('deployer', '/assign', { node: '@web', module: 'app' });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal(assigned.body?.said, 'web1: web1 is to run app\nweb2: web2 is to run app');

    const preview = await ask('deployer', '/converge', { node: '@web' });
    assert.equal(preview.status, 200, preview.text);
    const digest = preview.body?.digest as string;
    assert.match(digest, /^[0-9a-f]{64}$/);
    assert.equal(String(preview.body?.said).split('\n').at(-1), `digest ${digest}`);
    const nodes = preview.body?.nodes as Record<string, { outcome: string; digest: string }>;
    assert.deepEqual(Object.keys(nodes), ['web1', 'web2']);
    assert.equal(nodes.web1?.outcome, 'previewed');

    // The command line previews the same target to the same digest: one function.
    const cli = await world.berth('converge', '@web', '--json');
    assert.equal(JSON.parse(cli.stdout).digest, digest);

    const act = await ask('deployer', '/converge', { node: '@web', yes: true, digest });
    assert.equal(act.status, 200, act.text);
    assert.equal(act.body?.format_version, 1);
    const done = act.body?.nodes as Record<string, { outcome: string; ms: number }>;
    assert.equal(done.web1?.outcome, 'done');
    assert.equal(done.web2?.outcome, 'done');
    assert.equal(typeof done.web2?.ms, 'number');
    assert.match(String(act.body?.said), /2 of 2 nodes done$/);
    assert.equal(existsSync(join(world.dir, 'web1', 'started')), true);
  });

  it('refuses a target it cannot resolve as the command (409), not as a bad request', async () => {
    const answer = await ask('ops-lead', '/converge', { node: '@nope' });
    assert.equal(answer.status, 409);
    assert.equal(answer.body?.refused, 'berth.json has no group nope');
    const empty = await ask('ops-lead', '/converge', { node: '@web,!web1,!web2' });
    assert.equal(empty.status, 409);
    assert.equal(empty.body?.refused, '@web,!web1,!web2 names no node');
  });

  it('refuses a subject a target of which its grants cover only part, and nothing runs', async () => {
    const answer = await ask('deployer', '/converge', { node: '@all', yes: true });
    assert.equal(answer.status, 409);
    assert.equal(answer.body?.refused, 'deployer may not converge @all: no grant names it');
    assert.equal(existsSync(join(world.dir, 'db1', 'started')), false);
  });
});

describe("a target's parallel and batch over the Command API", () => {
  const crew = ['a1', 'a2', 'a3', 'a4'];
  let served: ServedApiWorld;
  let world: World;
  const ask = (body: Record<string, unknown>) => served.ask('/converge', body, { as: 'ops-lead' });
  const converge = async (extra: Record<string, unknown>) => {
    const preview = await ask({ node: '@crew' });
    assert.equal(preview.status, 200, preview.text);
    return ask({ node: '@crew', yes: true, digest: preview.body?.digest, ...extra });
  };

  before(async () => {
    served = await apiWorld({ prepare: readied });
  });
  after(() => served?.close());

  async function readied(made: World) {
    world = made;
    const nodes: Record<string, { root: string }> = {};
    for (const node of crew) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    // Two hooks running at once cannot both make the one directory: the second fails.
    const alone = join(world.dir, 'one-at-a-time');
    await world.writeModule('turn', {
      description: 'a start that must not run beside another',
      start: `mkdir ${alone} || exit 1; sleep 0.3; rmdir ${alone}; touch "$BERTH_ROOT/turned"`,
    });
    await world.writeModule('roll', {
      description: 'a start that fails where the node is broken',
      start: 'test ! -e "$BERTH_ROOT/broken" && touch "$BERTH_ROOT/rolled"',
    });
    await world.writeSettings({
      nodes,
      groups: { crew },
      grants: [{ sub: 'ops-lead', may: ['*'], on: '@all' }],
    });
  }

  it('acts on one node at a time with parallel 1', async () => {
    assert.equal((await world.berth('assign', '@crew', 'turn')).code, 0);
    const act = await converge({ parallel: 1 });
    assert.equal(act.status, 200, act.text);
    assert.match(String(act.body?.said), /4 of 4 nodes done$/);
    for (const node of crew) assert.equal(existsSync(join(world.dir, node, 'turned')), true);
  });

  it('begins no batch after one in which a node failed, with batch 1', async () => {
    assert.equal((await world.berth('assign', '@crew', 'roll')).code, 0);
    await writeFile(join(world.dir, 'a1', 'broken'), '');
    const act = await converge({ batch: 1 });
    assert.equal(act.status, 409, act.text);
    const nodes = act.body?.nodes as Record<string, { outcome: string }>;
    assert.deepEqual(
      crew.map((node) => nodes[node]?.outcome),
      ['failed', 'not-begun', 'not-begun', 'not-begun'],
    );
    assert.match(
      String(act.body?.refused),
      /^a2: not begun, as a batch before it had a node fail$/m,
    );
    for (const node of crew.slice(1))
      assert.equal(existsSync(join(world.dir, node, 'rolled')), false);
  });

  it('refuses a count that is not a whole number from 1 as a bad request, in words', async () => {
    const zero = await ask({ node: '@crew', parallel: 0 });
    assert.equal(zero.status, 400);
    assert.match(String(zero.body?.refused), /parallel: a whole number from 1, not 0$/);
    const half = await ask({ node: '@crew', batch: 1.5 });
    assert.equal(half.status, 400);
    assert.match(String(half.body?.refused), /batch: a whole number from 1, not 1\.5$/);
    const text = await ask({ node: '@crew', batch: '2' });
    assert.equal(text.status, 400);
    assert.match(String(text.body?.refused), /batch: expected a number, got the string "2"$/);
  });
});
