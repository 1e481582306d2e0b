/**
 * Grants through a real `berth api` believing a real loopback issuer, with tokens of
 * several subjects: what each may do is what berth.json's grants say, previews and acts
 * alike, and a refusal is the command's (409, journaled), never a half-done act.
 */
import assert from 'node:assert/strict';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { grantRefusal } from '../src/grants.ts';
import { type ApiProcess, httpAsk, startApiOn } from './helpers/api-process.ts';
import { type Issuer, startIssuer } from './helpers/issuer.ts';
import { digestOf, makeWorld, type World } from './helpers/world.ts';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('grants over the Command API, with tokens of several subjects', () => {
  let world: World;
  let issuer: Issuer;
  let api: ApiProcess;
  const tokens: Record<string, string> = {};
  /** Where each node's stop hook leaves its mark: a release that ran. */
  const stopped = (node: string) => join(world.dir, `${node}-stopped`);

  const ask = (subject: string, route: string, body: Record<string, unknown>) =>
    httpAsk(api.url, {
      path: route,
      body: JSON.stringify(body),
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${tokens[subject]}`,
      },
    });

  before(async () => {
    world = await makeWorld();
    const nodes: Record<string, { root: string }> = {};
    for (const node of ['box', 'web1', 'web2', 'db1']) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    await world.writeModule('app', {
      description: 'an app',
      files: { '/etc/app.conf': { content: 'port 80\n' } },
      start: 'true',
      stop: `touch "${world.dir}/$BERTH_NODE-stopped"`,
    });
    await world.writeSettings({
      nodes,
      groups: { web: ['web1', 'web2'], edge: ['@web', 'box'] },
      grants: [
        { sub: 'deployer', may: ['adopt', 'converge'], on: '@web' },
        { sub: 'ops-lead', may: ['*'], on: '@all' },
        { sub: 'edge-hand', may: ['converge'], on: '@edge,!web2' },
      ],
    });
    // Every node runs app, managed by berth, and is then to release it: a converge act
    // there runs app's stop.
    for (const node of Object.keys(nodes)) {
      assert.equal((await world.berth('assign', node, 'app')).code, 0);
      const preview = await world.berth('converge', node);
      const act = await world.berth(
        'converge',
        node,
        '--yes',
        '--digest',
        digestOf(preview.stdout),
      );
      assert.equal(act.code, 0, act.stderr);
      assert.equal((await world.berth('unassign', node, 'app')).code, 0);
    }
    issuer = await startIssuer();
    api = await startApiOn(world.state, issuer.url);
    for (const subject of ['deployer', 'ops-lead', 'edge-hand', 'stranger'])
      tokens[subject] = await issuer.token({ sub: subject });
  });
  after(async () => {
    await api?.stop();
    await issuer?.close();
    await world.cleanup();
  });

  /** A converge act over the API with the digest of the command line's own preview. */
  const converge = async (subject: string, node: string) => {
    const preview = await world.berth('converge', node);
    return ask(subject, '/converge', { node, yes: true, digest: digestOf(preview.stdout) });
  };

  it('refuses a subject releasing a module on a node no grant of its covers, and nothing runs', async () => {
    const answer = await converge('deployer', 'db1');
    assert.equal(answer.status, 409);
    assert.deepEqual(answer.body, {
      format_version: 1,
      said: '',
      refused: 'deployer may not converge db1: no grant names it',
      nodes: {},
    });
    assert.equal(await exists(stopped('db1')), false, 'the stop hook ran');
    const { managed } = await world.readState();
    assert.ok(Object.hasOwn(managed?.db1 ?? {}, 'app'), 'app is no longer managed on db1');
  });

  it('refuses the preview too, and journals both refusals with the subject', async () => {
    const answer = await ask('deployer', '/converge', { node: 'db1' });
    assert.equal(answer.status, 409);
    assert.equal(answer.body?.refused, 'deployer may not converge db1: no grant names it');
    const refused = (await world.journal()).filter((entry) => entry.actor === 'deployer');
    assert.deepEqual(
      refused.map(({ act, node, outcome, error }) => ({ act, node, outcome, error })),
      [
        {
          act: 'converge',
          node: 'db1',
          outcome: 'refused',
          error: 'deployer may not converge db1: no grant names it',
        },
        {
          act: 'converge preview',
          node: 'db1',
          outcome: 'refused',
          error: 'deployer may not converge db1: no grant names it',
        },
      ],
    );
    const log = await world.berth('log');
    assert.match(
      log.stdout,
      / deployer \(api\) converge preview db1: refused: deployer may not converge db1: no grant names it\n/,
    );
  });

  it('lets a granted subject act on a member of its group, and only as granted', async () => {
    const answer = await converge('deployer', 'web1');
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.body?.said), /released app/);
    assert.equal(await exists(stopped('web1')), true);
    const assign = await ask('deployer', '/assign', { node: 'web1', module: 'app' });
    assert.equal(assign.status, 409);
    assert.equal(assign.body?.refused, 'deployer may not assign web1: no grant names it');
  });

  it('covers a group through the groups it names, less the nodes a ! removes', async () => {
    const onBox = await ask('edge-hand', '/converge', { node: 'box' });
    assert.equal(onBox.status, 200, onBox.text);
    const onWeb2 = await ask('edge-hand', '/converge', { node: 'web2' });
    assert.equal(onWeb2.status, 409);
    assert.equal(onWeb2.body?.refused, 'edge-hand may not converge web2: no grant names it');
    const onDb1 = await ask('edge-hand', '/converge', { node: 'db1' });
    assert.equal(onDb1.status, 409);
  });

  it('lets * on @all do everything on every node', async () => {
    const answer = await converge('ops-lead', 'db1');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(await exists(stopped('db1')), true);
    const assign = await ask('ops-lead', '/assign', { node: 'web2', module: 'app' });
    assert.equal(assign.status, 200, assign.text);
  });

  it('refuses a subject without any grant, and tells it nothing of the inventory', async () => {
    const known = await ask('stranger', '/adopt', { node: 'box' });
    const unknown = await ask('stranger', '/adopt', { node: 'nowhere' });
    assert.equal(known.status, 409);
    assert.equal(known.body?.refused, 'stranger may not adopt box: no grant names it');
    assert.equal(unknown.body?.refused, 'stranger may not adopt nowhere: no grant names it');
  });

  it('leaves the command line out of the grants: its user can edit berth.json', async () => {
    const assign = await world.berth('assign', 'db1', 'app');
    assert.equal(assign.code, 0, assign.stderr);
  });
});

describe('grants, as berth.json says them', () => {
  const groups = { web: ['web1'] };

  it('lets everyone do everything without grants, and no one anything with none', () => {
    assert.equal(grantRefusal({ groups }, 'anyone', 'converge', 'db1'), undefined);
    assert.equal(
      grantRefusal({ groups, grants: [] }, 'anyone', 'converge', 'db1'),
      'anyone may not converge db1: no grant names it',
    );
  });

  it('needs one grant that names both the command and the node', () => {
    const grants = [
      { sub: 'dep', may: ['adopt' as const], on: '@web' },
      { sub: 'dep', may: ['converge' as const], on: 'db1' },
    ];
    assert.equal(grantRefusal({ groups, grants }, 'dep', 'adopt', 'web1'), undefined);
    assert.equal(grantRefusal({ groups, grants }, 'dep', 'converge', 'db1'), undefined);
    assert.equal(
      grantRefusal({ groups, grants }, 'dep', 'converge', 'web1'),
      'dep may not converge web1: no grant names it',
    );
    assert.equal(
      grantRefusal({ groups, grants }, 'other', 'adopt', 'web1'),
      'other may not adopt web1: no grant names it',
    );
  });
});
