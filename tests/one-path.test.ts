/**
 * One node is a target of one: the same request as a node's name, as a group of that node
 * alone and as a list that comes to it gives the same typed answer and the same words,
 * through the real binary and through a real `berth api` over a socket.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { untimed } from './helpers/timed.ts';
import type { World } from './helpers/world.ts';

/** web1 by name, as a group of web1 alone, and as a list that takes web2 away again. */
const SAME = ['web1', '@solo', '@web,!web2'];
// Not all digits: the option parser reads a word of digits as a number (docs/cli.md).
const STALE = 'f'.repeat(64);

describe('one node and a target of one', () => {
  let served: ServedApiWorld;
  let world: World;
  const ask = async (route: string, body: Record<string, unknown>) => {
    const answer = await served.ask(route, body, { as: 'ops' });
    return { status: answer.status, body: untimed(answer.body) };
  };
  const json = async (...args: string[]) => {
    const run = await world.berth(...args, '--json');
    return { code: run.code, answer: untimed(JSON.parse(run.stdout)), stderr: run.stderr };
  };

  before(async () => {
    served = await apiWorld({ prepare: readied });
  });
  after(() => served?.close());

  async function readied(made: World) {
    world = made;
    const nodes: Record<string, { root: string }> = {};
    for (const node of ['web1', 'web2']) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    await world.writeModule('app', {
      description: 'an app',
      files: { '/etc/app.conf': { content: 'port 80\n' } },
      start: 'touch "$BERTH_ROOT/started"',
    });
    await world.writeSettings({ nodes, groups: { web: ['web1', 'web2'], solo: ['web1'] } });
    assert.equal((await world.berth('assign', 'web1', 'app')).code, 0);
  }

  it('previews alike: the same words, digest, exit code and node entry', async () => {
    // One after another: run side by side, one may wait over a second for web1's lock
    // and say so on standard error, which is the lock's words, not the target's.
    const ran = [];
    for (const target of SAME) ran.push(await world.berth('converge', target));
    const [one, ...others] = ran;
    assert.equal(one?.code, 0, one?.stderr);
    assert.match(one?.stdout ?? '', /^converge web1\ninstall app:.*\ndigest [0-9a-f]{64}\n$/s);
    for (const other of others) assert.deepEqual(other, one);

    const typed = await Promise.all(SAME.map((target) => json('converge', target)));
    const [first] = typed;
    assert.deepEqual(Object.keys(first?.answer.nodes ?? {}), ['web1']);
    assert.equal(first?.answer.nodes.web1.outcome, 'previewed');
    assert.equal(first?.answer.digest, first?.answer.nodes.web1.digest);
    for (const each of typed) assert.deepEqual(each, first);

    const exits = await Promise.all(
      SAME.map(
        async (target) => (await world.berth('converge', target, '--detailed-exitcode')).code,
      ),
    );
    assert.deepEqual(exits, [2, 2, 2]);

    const overApi = await Promise.all(SAME.map((node) => ask('/converge', { node })));
    for (const each of overApi) assert.deepEqual(each, { status: 200, body: first?.answer });
  });

  it('refuses a stale digest alike, in the words of one node, and acts alike', async () => {
    const refused = await Promise.all(
      SAME.map((target) => json('converge', target, '--yes', '--digest', STALE)),
    );
    const [first] = refused;
    assert.equal(first?.code, 1);
    assert.equal(first?.answer.code, 'digest_stale');
    assert.equal(
      first?.answer.refused,
      `the preview changed since digest ${STALE.slice(0, 12)}…; preview again`,
    );
    assert.equal(first?.answer.nodes.web1.code, 'digest_stale');
    for (const each of refused) assert.deepEqual(each, first);
    const overApi = await Promise.all(
      SAME.map((node) => ask('/converge', { node, yes: true, digest: STALE })),
    );
    for (const each of overApi) assert.deepEqual(each, { status: 409, body: first?.answer });

    // The act on the group of one, on the digest of the node's own preview.
    const preview = await json('converge', 'web1');
    const act = await json('converge', '@solo', '--yes', '--digest', preview.answer.digest);
    assert.equal(act.code, 0, act.stderr);
    assert.equal(act.answer.nodes.web1.outcome, 'done');
    assert.equal(act.answer.nodes.web1.digest, preview.answer.digest);
    assert.match(act.answer.said, /\nweb1 is as assigned$/);
    assert.equal(existsSync(join(world.dir, 'web1', 'started')), true);
    assert.equal(existsSync(join(world.dir, 'web2', 'started')), false);
  });

  it('answers a command with no preview alike', async () => {
    const typed = await Promise.all(SAME.map((target) => json('assign', target, 'app')));
    const [first] = typed;
    assert.equal(first?.answer.said, 'web1 is already to run app; nothing changed');
    for (const each of typed) assert.deepEqual(each, first);
    const overApi = await Promise.all(SAME.map((node) => ask('/assign', { node, module: 'app' })));
    for (const each of overApi) assert.deepEqual(each, { status: 200, body: first?.answer });
  });
});
