/**
 * Grants through a real `berth api` believing a real loopback issuer, with tokens of
 * several subjects: what each may do is what berth.json's grants say, previews and acts
 * alike, and a refusal is the command's (409, journaled), never a half-done act.
 */
import assert from 'node:assert/strict';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { grantedTarget, grantRefusal } from '../src/model/grants.ts';
import { readTarget } from '../src/model/targets.ts';
import { refusalWords, refusedWords } from '../src/words/refusals.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { digestOf, type World } from './helpers/world.ts';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('grants over the Command API, with tokens of several subjects', () => {
  let served: ServedApiWorld;
  let world: World;
  /** Where each node's stop hook leaves its mark: a release that ran. */
  const stopped = (node: string) => join(world.dir, `${node}-stopped`);

  const ask = (subject: string, route: string, body: Record<string, unknown>) =>
    served.ask(route, body, { as: subject });

  before(async () => {
    served = await apiWorld({ prepare: readied });
  });
  after(() => served?.close());

  async function readied(made: World) {
    world = made;
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
  }

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
      code: 'not_granted',
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
    // Its grant's own target is one it may name; the group alone takes in web2.
    const asGranted = await ask('edge-hand', '/converge', { node: '@edge,!web2' });
    assert.equal(asGranted.status, 200, asGranted.text);
    const onEdge = await ask('edge-hand', '/converge', { node: '@edge' });
    assert.equal(onEdge.status, 409);
    assert.equal(
      onEdge.body?.refused,
      'edge-hand may not converge @edge: no grant names every node of it',
    );
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

describe('a subject under grants, naming nodes and groups it is not granted', () => {
  let served: ServedApiWorld;
  let world: World;
  /** What the subject may not be told: every name of the inventory its grants do not give it. */
  const hidden = ['db1', 'secretbox', 'internal', 'edge', 'lb1'];

  const ask = (subject: string, body: Record<string, unknown>) =>
    served.ask('/converge', body, { as: subject });

  before(async () => {
    served = await apiWorld({ prepare: readied });
  });
  after(() => served?.close());

  async function readied(made: World) {
    world = made;
    const nodes: Record<string, { root: string }> = {};
    for (const node of ['web1', 'web2', 'db1', 'secretbox', 'lb1']) {
      nodes[node] = { root: join(world.dir, node) };
      await mkdir(join(world.dir, node), { recursive: true });
    }
    await world.writeSettings({
      nodes,
      groups: { web: ['web1', 'web2'], internal: ['db1', 'secretbox'], edge: ['@web', 'lb1'] },
      grants: [
        { sub: 'deployer', may: ['converge'], on: '@web' },
        { sub: 'ops-lead', may: ['*'], on: '@all' },
      ],
    });
  }

  /**
   * Each pair: a target naming something of the inventory the subject is not granted, and
   * the same target with a name berth does not know in its place. The subject must not
   * tell them apart.
   */
  const pairs: [string, string, string, string][] = [
    // target, the name in it, the same target with an unknown name, that name
    ['web1,db', 'db', 'web1,qq', 'qq'],
    ['web1,@int', '@int', 'web1,@qq', '@qq'],
    ['web1,secretbox', 'secretbox', 'web1,nosuchnode', 'nosuchnode'],
    ['web1,@internal', '@internal', 'web1,@nosuchgroup', '@nosuchgroup'],
    ['@all', '@all', '@nosuchgroup', '@nosuchgroup'],
    ['@edge', '@edge', '@nosuchgroup', '@nosuchgroup'],
    ['@web,!db1', 'db1', '@web,!nosuchnode', 'nosuchnode'],
    ['db1', 'db1', 'nosuchnode', 'nosuchnode'],
  ];

  for (const [target, name, unknownTarget, unknown] of pairs)
    it(`answers ${target} as ${unknownTarget}, preview and act alike`, async () => {
      for (const yes of [false, true]) {
        const known = await ask('deployer', { node: target, yes });
        const other = await ask('deployer', { node: unknownTarget, yes });
        assert.equal(known.status, 409, known.text);
        const seen = (answer: typeof known, typed: string, typedName: string) => ({
          status: answer.status,
          said: answer.body?.said,
          refused: String(answer.body?.refused)
            .replaceAll(typed, '<target>')
            .replaceAll(typedName, '<name>'),
          nodes: answer.body?.nodes,
        });
        assert.deepEqual(seen(known, target, name), seen(other, unknownTarget, unknown));
        // Nothing of the inventory it is not granted, and no count, beyond what it typed.
        const told = `${known.body?.said}\n${known.body?.refused}`
          .replaceAll(target, '')
          .replaceAll(name, '');
        for (const word of hidden) assert.doesNotMatch(told, new RegExp(word), told);
        assert.doesNotMatch(told, /[0-9]/, told);
      }
    });

  it('refuses a list with one ungranted node in the words of the grants, and journals the preview', async () => {
    const answer = await ask('deployer', { node: 'web1,secretbox' });
    assert.deepEqual(answer.body, {
      format_version: 1,
      said: '',
      refused: 'deployer may not converge web1,secretbox: no grant names secretbox',
      code: 'not_granted',
      nodes: {},
    });
    const journaled = (await world.journal()).filter((entry) => entry.node === 'web1,secretbox');
    assert.ok(
      journaled.some((entry) => entry.act === 'converge preview' && entry.outcome === 'refused'),
    );
  });

  it('still takes a target made of what the grants give', async () => {
    const answer = await ask('deployer', { node: 'web1,web2' });
    assert.equal(answer.status, 200, answer.text);
    const nodes = answer.body?.nodes as Record<string, { outcome: string }>;
    assert.deepEqual(Object.keys(nodes), ['web1', 'web2']);
    const empty = await ask('deployer', { node: '@web,!web1,!web2' });
    assert.equal(empty.status, 409);
    assert.equal(empty.body?.refused, '@web,!web1,!web2 names no node');
  });

  it('tells a subject granted every node what the command line would', async () => {
    const answer = await ask('ops-lead', { node: 'web1,db' });
    assert.equal(answer.status, 409);
    assert.equal(
      answer.body?.refused,
      'berth does not know node db; did you mean db1? Else add it under nodes in berth.json',
    );
  });
});

describe('grants, as berth.json says them', () => {
  const groups = { web: ['web1'] };

  it('gives a subject the names its grants name or take in, and groups wholly granted', () => {
    const settings = {
      nodes: { web1: { root: '/' }, web2: { root: '/' }, db1: { root: '/' } },
      groups: { web: ['web1', 'web2'], canary: ['web1'], empty: [], mixed: ['web1', 'db1'] },
      grants: [{ sub: 'dep', may: ['converge' as const], on: '@web' }],
    };
    // As the act asks it: the target read on the inventory, then held to the grants; a
    // refusal as the API answers it, its words rendered from the typed value, and its code.
    const granted = (
      given: Parameters<typeof grantedTarget>[0],
      command: string,
      target: string,
    ) => {
      const answer = grantedTarget(
        given,
        'dep',
        command,
        readTarget(target, { nodes: Object.keys(given.nodes), groups: given.groups }),
      );
      if (answer.ok) return answer;
      const { refusal, ...rest } = answer;
      return { ...rest, refused: refusalWords(refusal), code: refusal.code };
    };
    const read = (target: string) => granted(settings, 'converge', target);
    assert.deepEqual(read('@canary,web2'), { ok: true, nodes: ['web1', 'web2'] });
    for (const [target, name] of [
      ['web1,@empty', '@empty'],
      ['web1,@mixed', '@mixed'],
      ['@web,!@mixed', '@mixed'],
    ] as const)
      assert.deepEqual(read(target), {
        ok: false,
        refused: `dep may not converge ${target}: no grant names ${name}`,
        code: 'not_granted',
        byGrants: true,
      });
    // A grant that takes in every node less one gives every name, the one it removes too.
    const allBut = { ...settings, grants: [{ sub: 'dep', may: ['*' as const], on: '@all,!db1' }] };
    assert.deepEqual(granted(allBut, 'adopt', '@all,!db1'), {
      ok: true,
      nodes: ['web1', 'web2'],
    });
    assert.equal(
      (granted(allBut, 'adopt', '@all') as { refused: string }).refused,
      'dep may not adopt @all: no grant names every node of it',
    );
  });

  it('lets everyone do everything without grants, and no one anything with none', () => {
    assert.equal(grantRefusal({ groups }, 'anyone', 'converge', 'db1'), undefined);
    assert.equal(
      refusedWords(grantRefusal({ groups, grants: [] }, 'anyone', 'converge', 'db1')),
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
      refusedWords(grantRefusal({ groups, grants }, 'dep', 'converge', 'web1')),
      'dep may not converge web1: no grant names it',
    );
    assert.equal(
      refusedWords(grantRefusal({ groups, grants }, 'other', 'adopt', 'web1')),
      'other may not adopt web1: no grant names it',
    );
  });
});
