/**
 * Declared desired state: berth.json's `run` says what nodes and groups run, beside what
 * `assign` keeps. Through the real binary, with the node records read from disk.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeWorld, type World } from './helpers/world.ts';

describe("berth.json's run", () => {
  let world: World;
  const rootOf = (node: string) => join(world.dir, node);
  const assignedOnDisk = async (node: string) =>
    JSON.parse(await readFile(join(world.state, 'nodes', node, 'record.json'), 'utf8')).assigned;
  const settings = (run: unknown) => ({
    nodes: Object.fromEntries(
      ['web1', 'web2', 'db1'].map((node) => [node, { root: rootOf(node) }]),
    ),
    groups: { web: ['web1', 'web2'] },
    run,
  });

  before(async () => {
    world = await makeWorld({
      nginx: {
        description: 'nginx',
        files: { '/etc/nginx.conf': { content: 'x\n' } },
        start: 'touch "$BERTH_ROOT/started-nginx"',
      },
      redis: { description: 'redis', files: { '/etc/redis.conf': { content: 'y\n' } } },
    });
    for (const node of ['web1', 'web2', 'db1']) await mkdir(rootOf(node), { recursive: true });
    await world.writeSettings(settings({ '@web': ['nginx'], db1: ['postgresql'] }));
  });
  after(() => world.cleanup());

  test('status says where each module comes from', async () => {
    assert.equal((await world.berth('assign', 'web1', 'redis')).code, 0);
    const status = await world.berth('status', '@web');
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /^web1 \(root .*\)\n {2}to run: nginx \(berth\.json run\.@web\), redis \(assigned\)\n/m,
    );
    assert.match(
      status.stdout,
      /^web2 \(root .*\)\n {2}to run: nginx \(berth\.json run\.@web\)\n/m,
    );
  });

  test('nodes says what each node is to run, from run and from assignments, and where from', async () => {
    const nodes = await world.berth('nodes', '@web');
    assert.equal(nodes.code, 0, nodes.stderr);
    assert.equal(
      nodes.stdout,
      [
        `web1  root ${rootOf('web1')}  groups web  to run: nginx (berth.json run.@web), redis (assigned)`,
        `web2  root ${rootOf('web2')}  groups web  to run: nginx (berth.json run.@web)`,
        '',
      ].join('\n'),
    );
    const json = await world.berth('nodes', '@web', '--json');
    assert.equal(json.code, 0, json.stderr);
    const [web1, web2] = JSON.parse(json.stdout).nodes;
    assert.deepEqual(
      { run: web1.run, assigned: web1.assigned, declared: web1.declared },
      {
        run: ['nginx', 'redis'],
        assigned: ['redis'],
        declared: [{ module: 'nginx', from: ['@web'] }],
      },
    );
    assert.deepEqual(
      { run: web2.run, assigned: web2.assigned, declared: web2.declared },
      { run: ['nginx'], assigned: [], declared: [{ module: 'nginx', from: ['@web'] }] },
    );
  });

  test('a converge installs the declared module; it is never written into the kept assignments', async () => {
    const preview = await world.berth('converge', '@web');
    assert.match(preview.stdout, / {2}web1: install nginx, install redis/);
    const act = await world.actOn(preview, 'converge', '@web');
    assert.equal(act.code, 0, act.stderr);
    assert.equal(existsSync(join(rootOf('web2'), 'started-nginx')), true);
    assert.deepEqual(await assignedOnDisk('web1'), ['redis']);
    assert.deepEqual(await assignedOnDisk('web2'), []);
  });

  test('unassign of a declared module is refused naming berth.json', async () => {
    const refused = await world.berth('unassign', 'web2', 'nginx');
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      'web2 is to run nginx because berth.json declares it (run.@web); remove it there to stop running it\n',
    );
  });

  test('a declared module that does not resolve is said as an assignment that does not would be', async () => {
    const declared = await world.berth('converge', 'db1');
    assert.equal(declared.code, 0);
    assert.equal((await world.berth('assign', 'web2', 'postgresql')).code, 1);
    const assigned = await world.berth('converge', 'web2');
    const blocked = (said: string, node: string) =>
      said
        .split('\n')
        .filter((line) => line.startsWith('blocked: postgresql'))
        .map((line) => line.replaceAll(node, 'NODE'));
    assert.deepEqual(blocked(declared.stdout, 'db1'), blocked(assigned.stdout, 'web2'));
    assert.equal(blocked(declared.stdout, 'db1').length, 1);
  });

  test('a run target that is not in the inventory makes berth.json not valid, in words', async () => {
    await world.writeSettings(settings({ '@webs': ['nginx'] }));
    const refused = await world.berth('converge', 'web1');
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /berth\.json is not valid: run\.@webs: berth\.json has no group webs/,
    );
  });

  test('a run entry that names no module of the catalog: validate and status find it, with what was meant', async () => {
    await world.writeSettings(settings({ '@web': ['ngnix'], db1: ['redis'] }));
    const berthJson = join(world.state, 'berth.json');
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1);
    assert.equal(
      validate.stdout,
      `${berthJson}: run.@web.0: ngnix is not in the catalog; did you mean nginx?\n`,
    );
    const json = await world.berth('validate', '--json');
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout).problems, [
      { file: berthJson, problem: 'run.@web.0: ngnix is not in the catalog; did you mean nginx?' },
    ]);

    const status = await world.berth('status', 'web2');
    assert.equal(status.code, 1);
    assert.match(
      status.stdout,
      /\n {2}berth\.json run\.@web\.0: ngnix does not resolve: it is not in the catalog \(no file \S+ngnix\.json\); did you mean nginx\?\n/,
    );
    const statusJson = await world.berth('status', 'web2', '--json');
    assert.equal(statusJson.code, 1);
    assert.match(JSON.parse(statusJson.stdout).nodes[0].unresolved.ngnix, /did you mean nginx\?$/);
    // A node berth.json declares nothing wrong for is as before.
    assert.equal((await world.berth('status', 'db1')).code, 0);
  });
});
