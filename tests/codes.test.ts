/**
 * Every refusal and blocker carries a code from the one closed list, on both faces, for
 * one node and for a target: `--json` through the real binary and the Command API's body
 * (`code` beside `refused`, `nodes[].code`, `blockers[].code`), so that a script tells a
 * stale digest from a blocker from a grant without parsing a sentence.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { CODES, CodeSchema } from '../src/codes.ts';
import { appOver, post } from './helpers/api.ts';
import { acceptAs, makeWorld, type World } from './helpers/world.ts';

const NODES = ['web1', 'web2', 'web3'];

interface Asked {
  command: string;
  node: string;
  module?: string;
  yes?: boolean;
  digest?: string;
}

type Body = {
  code?: string;
  refused?: string;
  digest?: string;
  nodes?: Record<string, { code?: string; blockers: { code: string; kind: string }[] }>;
};

describe('codes beside the words', () => {
  let world: World;
  const rootOf = (node: string) => join(world.dir, node);

  before(async () => {
    world = await makeWorld({
      nginx: {
        description: 'nginx',
        files: { '/etc/nginx/nginx.conf': { content: 'worker_processes 2;\n' } },
      },
      needy: { description: 'needs what is not there', needs: ['ghost'] },
      failing: { description: 'a start that fails', start: 'exit 3' },
    });
    for (const node of NODES) await mkdir(rootOf(node), { recursive: true });
    await world.writeSettings({
      nodes: Object.fromEntries(NODES.map((node) => [node, { root: rootOf(node) }])),
      groups: { web: NODES, front: ['web1', 'web2'] },
      grants: [
        { sub: 'alice', may: ['*'], on: '@all' },
        { sub: 'bob', may: ['converge'], on: 'web1' },
      ],
    });
  });
  after(() => world.cleanup());

  /** The command on the command line with --json: its exit and its one JSON object. */
  async function cli(asked: Asked): Promise<{ exit: number; body: Body }> {
    const args = [asked.command, asked.node, ...(asked.module ? [asked.module] : [])];
    if (asked.yes) args.push('--yes');
    if (asked.digest) args.push('--digest', asked.digest);
    const run = await world.berth(...args, '--json');
    return { exit: run.code, body: JSON.parse(run.stdout) };
  }

  /** The same request over the Command API, as `subject`. */
  async function api(asked: Asked, subject = 'alice'): Promise<{ status: number; body: Body }> {
    const app = appOver(world.state, { authenticator: acceptAs(subject) });
    const { command, ...request } = asked;
    const answer = await post(app, `/${command}`, request);
    return { status: answer.status, body: answer.body as Body };
  }

  /** Both faces refuse with `code`, for the answer and, when given, each node named. */
  async function refusedOnBoth(asked: Asked, code: string, nodes: string[] = []) {
    const line = await cli(asked);
    const served = await api(asked);
    for (const [face, body] of [
      ['--json', line.body],
      ['API', served.body],
    ] as const) {
      assert.equal(body.code, code, `${face}: ${body.refused}`);
      assert.ok(v.is(CodeSchema, body.code), `${face}: ${body.code} is in the list`);
      assert.equal(typeof body.refused, 'string');
      for (const node of nodes) assert.equal(body.nodes?.[node]?.code, code, `${face}: ${node}`);
    }
    return { line, served };
  }

  test('unknown_node, unknown_group, invalid_target, invalid_name', async () => {
    const one = await refusedOnBoth({ command: 'converge', node: 'web9' }, 'unknown_node');
    assert.equal(one.line.exit, 1);
    assert.equal(one.served.status, 409);
    await refusedOnBoth({ command: 'converge', node: 'web1,web9' }, 'unknown_node');
    await refusedOnBoth({ command: 'converge', node: '@nope' }, 'unknown_group');
    await refusedOnBoth({ command: 'converge', node: 'web1,,web2' }, 'invalid_target');
    await refusedOnBoth({ command: 'assign', node: 'web1', module: 'Bad_Name' }, 'invalid_name');
  });

  test('unknown_module, for one node and for each node of a group', async () => {
    await refusedOnBoth({ command: 'take', node: 'web1', module: 'nosuch' }, 'unknown_module', [
      'web1',
    ]);
    await refusedOnBoth({ command: 'take', node: '@front', module: 'nosuch' }, 'unknown_module', [
      'web1',
      'web2',
    ]);
  });

  test('fields_missing: exit 2 on the command line, 400 over the API', async () => {
    const served = await api({ command: 'adopt', node: '' });
    assert.equal(served.status, 400);
    assert.deepEqual(served.body, { refused: 'node is needed', code: 'fields_missing' });
  });

  test('not_granted over the API, for a node and for a group', async () => {
    for (const node of ['web2', '@web']) {
      const served = await api({ command: 'converge', node }, 'bob');
      assert.equal(served.status, 409);
      assert.equal(served.body.code, 'not_granted', served.body.refused);
    }
  });

  test('digest_needed, invalid_digest and digest_stale, for a node and for a group', async () => {
    assert.equal((await world.berth('assign', '@web', 'nginx')).code, 0);
    for (const node of ['web1', '@web']) {
      await refusedOnBoth({ command: 'converge', node, yes: true }, 'digest_needed');
      await refusedOnBoth(
        { command: 'converge', node, yes: true, digest: 'xyz' },
        'invalid_digest',
      );
    }
    const one = (await cli({ command: 'converge', node: 'web1' })).body.digest as string;
    const group = (await cli({ command: 'converge', node: '@web' })).body.digest as string;
    // web1 changes by hand between the previews and their acts.
    await mkdir(join(rootOf('web1'), 'etc/nginx'), { recursive: true });
    await writeFile(join(rootOf('web1'), 'etc/nginx/nginx.conf'), 'by hand\n');
    await refusedOnBoth(
      { command: 'converge', node: 'web1', yes: true, digest: one },
      'digest_stale',
      ['web1'],
    );
    const stale = await refusedOnBoth(
      { command: 'converge', node: '@web', yes: true, digest: group },
      'digest_stale',
      NODES,
    );
    assert.match(stale.line.body.refused ?? '', /nothing was done on any node/);
    await world.berth('unassign', '@web', 'nginx');
  });

  test('blocked, with each blocker coded; a group with one node blocked', async () => {
    assert.equal((await world.berth('assign', 'web3', 'needy')).code, 1);
    const preview = await cli({ command: 'converge', node: 'web3' });
    const [blocker] = preview.body.nodes?.web3?.blockers ?? [];
    assert.deepEqual(blocker && [blocker.code, blocker.kind], [
      'does_not_resolve',
      'does-not-resolve',
    ]);
    const one = await refusedOnBoth(
      { command: 'converge', node: 'web3', yes: true, digest: preview.body.digest },
      'blocked',
      ['web3'],
    );
    assert.equal(one.served.body.nodes?.web3?.blockers[0]?.code, 'does_not_resolve');

    const group = await cli({ command: 'converge', node: '@web' });
    assert.equal(group.body.nodes?.web3?.blockers[0]?.code, 'does_not_resolve');
    const act = await cli({
      command: 'converge',
      node: '@web',
      yes: true,
      digest: group.body.digest,
    });
    assert.equal(act.exit, 1);
    assert.equal(act.body.code, 'blocked');
    assert.equal(act.body.nodes?.web3?.code, 'blocked');
    assert.equal(act.body.nodes?.web1?.code, undefined, 'a node done has no code');
    await world.berth('unassign', 'web3', 'needy');
  });

  test('hook_failed, and nodes_refused when the nodes of a target refused for different reasons', async () => {
    await world.berth('assign', 'web1', 'failing');
    await world.berth('assign', 'web2', 'needy');
    const one = await cli({ command: 'converge', node: 'web1' });
    const failed = await cli({
      command: 'converge',
      node: 'web1',
      yes: true,
      digest: one.body.digest,
    });
    assert.equal(failed.exit, 1);
    assert.equal(failed.body.code, 'hook_failed');
    assert.equal(failed.body.nodes?.web1?.code, 'hook_failed');

    const group = await cli({ command: 'converge', node: '@front' });
    const mixed = await api({
      command: 'converge',
      node: '@front',
      yes: true,
      digest: group.body.digest,
    });
    assert.equal(mixed.status, 409);
    assert.equal(mixed.body.code, 'nodes_refused');
    assert.equal(mixed.body.nodes?.web1?.code, 'hook_failed');
    assert.equal(mixed.body.nodes?.web2?.code, 'blocked');
  });

  test('invalid_config: berth.json not valid, on both faces', async () => {
    const broken = await makeWorld();
    try {
      await writeFile(join(broken.state, 'berth.json'), '{"nodes": {"box": {}}}');
      const run = await broken.berth('converge', 'box', '--json');
      assert.equal(run.code, 1);
      assert.equal(JSON.parse(run.stdout).code, 'invalid_config');
      const served = await post(appOver(broken.state), '/converge', { node: 'box' });
      assert.equal(served.status, 409);
      assert.equal(served.body?.code, 'invalid_config');
    } finally {
      await broken.cleanup();
    }
  });
});

test('docs/codes.md says when each code is given and what to do, and no code beside the list', async () => {
  const doc = await readFile(join(import.meta.dirname, '../docs/codes.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (.+?) \| (.+?) \|$/gm)];
  assert.deepEqual([...new Set(rows.map((row) => row[1]))].sort(), [...CODES].sort());
});
