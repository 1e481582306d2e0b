/**
 * A target of several nodes through the real binary: groups, lists and exclusions, one
 * preview and digest, an act that does nothing anywhere when a node changed, a failing
 * and a blocked node that do not stop the others, and rolling batches.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { digestOf, makeWorld, type World } from './helpers/world.ts';

const NODES = ['db1', 'web1', 'web2', 'web3'];

const NGINX = {
  description: 'nginx',
  files: { '/etc/nginx/nginx.conf': { content: 'worker_processes 2;\n' } },
  start: 'touch "$BERTH_ROOT/started-nginx"',
};

/** A world of four rooted nodes, web1..3 in @web. */
async function fleetWorld(): Promise<World & { rootOf(node: string): string }> {
  const world = await makeWorld({ nginx: NGINX });
  const rootOf = (node: string) => join(world.dir, node);
  for (const node of NODES) await mkdir(rootOf(node), { recursive: true });
  await world.writeSettings({
    nodes: Object.fromEntries(NODES.map((node) => [node, { root: rootOf(node) }])),
    groups: { web: ['web1', 'web2', 'web3'] },
  });
  return { ...world, rootOf };
}

describe('a target of several nodes', () => {
  let world: Awaited<ReturnType<typeof fleetWorld>>;
  before(async () => {
    world = await fleetWorld();
  });
  after(() => world.cleanup());

  test('assign on a group assigns each node; an unknown group is refused in words', async () => {
    const assigned = await world.berth('assign', '@web', 'nginx');
    assert.equal(assigned.code, 0, assigned.stderr);
    assert.equal(
      assigned.stdout,
      'web1: web1 is to run nginx\nweb2: web2 is to run nginx\nweb3: web3 is to run nginx\n',
    );
    const unknown = await world.berth('converge', '@webs');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /berth\.json has no group webs/);
  });

  test('a list with an exclusion previews each node, a recap, and one digest last', async () => {
    const preview = await world.berth('converge', '@web,!web3');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /^converge web1\ninstall nginx:/);
    assert.match(preview.stdout, /\nconverge web2\ninstall nginx:/);
    assert.doesNotMatch(preview.stdout, /converge web3| {2}web3:/);
    assert.match(
      preview.stdout,
      /recap of converge @web,!web3:\n {2}web1: install nginx \(3 steps\)\n {2}web2: install nginx \(3 steps\)\n/,
    );
    digestOf(preview.stdout);
    const json = JSON.parse((await world.berth('converge', '@web,!web3', '--json')).stdout);
    assert.deepEqual(Object.keys(json.nodes), ['web1', 'web2']);
    assert.equal(json.digest, digestOf(preview.stdout));
    assert.equal(json.nodes.web1.outcome, 'previewed');
    assert.deepEqual(
      json.nodes.web1.steps.map((step: { kind: string }) => step.kind),
      ['manage', 'write', 'start'],
    );
  });

  test('a node changed between preview and act: nothing done anywhere, the node and change named', async () => {
    const preview = await world.berth('converge', '@web');
    const digest = digestOf(preview.stdout);
    await mkdir(join(world.rootOf('web2'), 'etc/nginx'), { recursive: true });
    await writeFile(join(world.rootOf('web2'), 'etc/nginx/nginx.conf'), 'by hand\n');
    const act = await world.berth('converge', '@web', '--yes', '--digest', digest);
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      /the preview changed since digest [0-9a-f]{12}…: web2: file \/etc\/nginx\/nginx.conf changed on web2; nothing was done on any node; preview again/,
    );
    assert.doesNotMatch(act.stderr, /web1:.*changed/);
    for (const node of ['web1', 'web3'])
      assert.equal(existsSync(join(world.rootOf(node), 'etc/nginx/nginx.conf')), false, node);
    assert.equal(
      await readFile(join(world.rootOf('web2'), 'etc/nginx/nginx.conf'), 'utf8'),
      'by hand\n',
    );
    await rm(join(world.rootOf('web2'), 'etc'), { recursive: true });
  });

  test('the act on an unchanged preview acts on every node and recaps each with its time', async () => {
    const preview = await world.berth('converge', '@web');
    const act = await world.actOn(preview, 'converge', '@web');
    assert.equal(act.code, 0, act.stderr);
    assert.match(act.stdout, /web1: wrote \/etc\/nginx\/nginx.conf\n/);
    assert.match(
      act.stdout,
      /recap of converge @web:\n {2}web1: done in \d+\.\d s\n {2}web2: done in/,
    );
    assert.match(act.stdout, /3 of 3 nodes done\n$/);
    for (const node of ['web1', 'web2', 'web3'])
      assert.equal(existsSync(join(world.rootOf(node), 'started-nginx')), true, node);
    const journal = await world.journal();
    // The act refused above on a stale digest is journaled once, with its target.
    const acts = journal.filter((entry) => entry.act === 'converge' && entry.outcome === 'done');
    assert.deepEqual(acts.map((entry) => entry.node).sort(), ['web1', 'web2', 'web3']);
  });
});

describe('a failing and a blocked node do not stop the others', () => {
  let world: Awaited<ReturnType<typeof fleetWorld>>;
  before(async () => {
    world = await fleetWorld();
    // web2's start fails: its machine has a file where the hook wants a directory.
    await world.writeModule('app', {
      description: 'an app whose start needs a directory',
      files: { '/etc/app.conf': { content: 'x\n' } },
      start: 'mkdir -p "$BERTH_ROOT/run/app" && touch "$BERTH_ROOT/run/app/started"',
    });
    await world.writeModule('needy', { description: 'needs what is not there', needs: ['ghost'] });
    await world.berth('assign', '@all', 'app');
    await writeFile(join(world.rootOf('web2'), 'run'), 'not a directory\n');
    const assignBlocked = await world.berth('assign', 'web3', 'needy');
    assert.equal(assignBlocked.code, 1);
  });
  after(() => world.cleanup());

  test('exit 1, each node in the recap, refused naming the failed and the blocked', async () => {
    const preview = await world.berth('converge', '@all');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, / {2}web3: blocked: needy does not resolve/);
    const act = await world.actOn(preview, 'converge', '@all', '--json');
    assert.equal(act.code, 1);
    const answer = JSON.parse(act.stdout);
    assert.equal(answer.nodes.db1.outcome, 'done');
    assert.equal(answer.nodes.web1.outcome, 'done');
    assert.equal(answer.nodes.web2.outcome, 'failed');
    assert.equal(answer.nodes.web3.outcome, 'refused');
    assert.equal(answer.nodes.web3.blockers[0].kind, 'does-not-resolve');
    assert.equal(answer.code, 'nodes_refused');
    assert.equal(answer.nodes.web2.code, 'hook_failed');
    assert.equal(answer.nodes.web3.code, 'blocked');
    assert.equal(answer.nodes.db1.code, undefined);
    assert.equal(answer.nodes.web1.code, undefined);
    assert.doesNotMatch(answer.refused, /^(db1|web1):/m);
    assert.match(answer.said, / {2}web2: failed in \d+\.\d s: converge of web2 stopped at app/);
    assert.match(answer.said, / {2}web3: blocked: /);
    assert.match(answer.said, /2 of 4 nodes done$/);
    assert.equal(existsSync(join(world.rootOf('db1'), 'run/app/started')), true);
    assert.equal(existsSync(join(world.rootOf('web1'), 'run/app/started')), true);
  });
});

describe('--batch: a rolling act', () => {
  let world: Awaited<ReturnType<typeof fleetWorld>>;
  before(async () => {
    world = await fleetWorld();
    await world.writeModule('app', {
      description: 'an app whose start needs a directory',
      start: 'mkdir -p "$BERTH_ROOT/run/app" && touch "$BERTH_ROOT/run/app/started"',
    });
    await world.berth('assign', '@all', 'app');
    // web1, in the second batch of two, fails; no batch after it is begun.
    await writeFile(join(world.rootOf('web1'), 'run'), 'not a directory\n');
  });
  after(() => world.cleanup());

  test('no batch is begun after one in which a node failed', async () => {
    const preview = await world.berth('converge', '@all');
    const act = await world.actOn(preview, 'converge', '@all', '--batch', '1');
    assert.equal(act.code, 1);
    assert.match(
      act.stdout,
      /recap of converge @all:\n {2}db1: done in [\d.]+ s\n {2}web1: failed in [\d.]+ s: .*\n {2}web2: not begun\n {2}web3: not begun\n1 of 4 nodes done\n$/,
    );
    assert.match(act.stderr, /^web2: not begun, as a batch before it had a node fail$/m);
    assert.equal(existsSync(join(world.rootOf('web2'), 'run/app/started')), false);
    const journal = await world.journal();
    assert.deepEqual(
      journal.filter((entry) => entry.act === 'converge').map((entry) => entry.node),
      ['db1', 'web1'],
    );
    const bad = await world.berth('converge', '@all', '--batch', '0');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--batch takes a whole number from 1, not "0"/);
  });
});

describe('a node whose act waits for its turn is surveyed again', () => {
  let world: Awaited<ReturnType<typeof fleetWorld>>;
  before(async () => {
    world = await fleetWorld();
    // db1's start writes over web1's nginx.conf: a change on web1 after the act's check.
    const conf = join(world.rootOf('web1'), 'etc/nginx/nginx.conf');
    await world.writeModule('reach', {
      description: 'a start that changes another node',
      start: `mkdir -p '${join(world.rootOf('web1'), 'etc/nginx')}' && echo 'by db1' > '${conf}'`,
    });
    assert.equal((await world.berth('assign', 'db1', 'reach')).code, 0);
    assert.equal((await world.berth('assign', 'web1', 'nginx')).code, 0);
  });
  after(() => world.cleanup());

  test('with --parallel 1, web1 acts on what it holds after db1 acted, not on the check', async () => {
    const preview = await world.berth('converge', 'db1,web1');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await world.actOn(preview, 'converge', 'db1,web1', '--parallel', '1', '--json');
    assert.equal(act.code, 1, act.stderr);
    const answer = JSON.parse(act.stdout);
    assert.equal(answer.nodes.db1.outcome, 'done');
    assert.equal(answer.nodes.web1.outcome, 'refused');
    assert.equal(answer.nodes.web1.code, 'digest_stale');
    const conf = await readFile(join(world.rootOf('web1'), 'etc/nginx/nginx.conf'), 'utf8');
    assert.equal(conf, 'by db1\n');
  });
});

describe('a diff the same on several nodes, and an adopt of many', () => {
  let world: Awaited<ReturnType<typeof fleetWorld>>;
  before(async () => {
    world = await fleetWorld();
    // nginx installed by hand: web1 and web2 alike, web3 otherwise.
    const byHand = { web1: 'worker_processes 1;\n', web2: 'worker_processes 1;\n', web3: 'x;\n' };
    for (const [node, text] of Object.entries(byHand)) {
      await mkdir(join(world.rootOf(node), 'etc/nginx'), { recursive: true });
      await writeFile(join(world.rootOf(node), 'etc/nginx/nginx.conf'), text);
    }
  });
  after(() => world.cleanup());

  test('adopt of a target ends with a recap, a line a node', async () => {
    const adopt = await world.berth('adopt', '@all');
    assert.equal(adopt.code, 0, adopt.stderr);
    assert.match(
      adopt.stdout,
      /\nrecap of adopt @all:\n {2}db1: holds nothing of the catalog's one module\n {2}web1: holds nginx\n {2}web2: holds nginx\n {2}web3: holds nginx\n4 of 4 nodes adopted\n$/,
    );
  });

  test("a target's preview shows a diff the same on several nodes once, naming them", async () => {
    const preview = await world.berth('take', '@web', 'nginx');
    assert.equal(preview.code, 0, preview.stderr);
    const { stdout } = preview;
    // Once for web1 and web2 together, once for web3.
    assert.equal(stdout.split('+++ /etc/nginx/nginx.conf as berth writes it').length - 1, 2);
    assert.equal(stdout.split('-worker_processes 1;').length - 1, 1);
    assert.match(
      stdout,
      /\nthe same diff on several nodes:\nweb1, web2: \/etc\/nginx\/nginx.conf\n {4}--- \/etc\/nginx\/nginx.conf on web1, web2\n {4}\+\+\+ \/etc\/nginx\/nginx.conf as berth writes it\n {4}\(\+1 −1 lines\)\n {4}@@ -1 \+1 @@\n {4}-worker_processes 1;\n {4}\+worker_processes 2;\n\nrecap of take @web nginx:/,
    );
    for (const node of ['web1', 'web2'])
      assert.match(
        stdout,
        new RegExp(
          `take nginx on ${node}, .*\nfile /etc/nginx/nginx.conf: differs from what berth writes; the next converge rewrites it\n {4}the same diff on web1, web2: shown once, after the nodes\ndigest`,
        ),
      );
    assert.match(stdout, /\n {4}--- \/etc\/nginx\/nginx.conf on web3\n(?:.*\n){3} {4}-x;\n/);
    // The words changed, not the preview: its digest still acts.
    const act = await world.berth('take', '@web', 'nginx', '--yes', '--digest', digestOf(stdout));
    assert.equal(act.code, 0, act.stderr);
  });
});
