/**
 * The codes of a command's own refusals — a module it does not know or cannot read, an
 * assignment or a management that is not as the command needs, an account that says
 * nothing or too old, a secret it cannot read or open, a flag not for an act — on both
 * faces (those the API has), for one node and for a group.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Code } from '../../src/model/codes.ts';
import { apiWorld } from '../helpers/api-world.ts';
import { runBerth } from '../helpers/world.ts';
import { type Asked, type Body, bodyOf, codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('commands');

/** Nodes by the situation each test puts them in, two a group. */
const GROUPS = {
  fresh: ['f1', 'f2'],
  managed: ['m1', 'm2'],
  declared: ['d1', 'd2'],
  needed: ['n1', 'n2'],
  adopted: ['a1', 'a2'],
  kept: ['k1', 'k2'],
  rotating: ['t1', 't2'],
};

describe("a command's own refusals", () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      modules: {
        note: { description: 'a note' },
        broken: { description: 5 },
        base: { description: 'what top needs' },
        top: { description: 'needs base', needs: ['base'] },
        keyed: {
          description: 'a module with a secret',
          secrets: { key: { path: '/etc/keyed/key' } },
          files: { '/etc/keyed/conf': { content: 'key={{secret key}}\n' } },
        },
        locked: {
          description: 'a secret in a directory',
          secrets: { key: { path: '/etc/locked/key' } },
        },
        signer: {
          description: 'a key, and a random secret',
          secrets: {
            signing: { kind: 'ec-p256', path: '/etc/signer/signing.key' },
            token: { path: '/etc/signer/token' },
          },
        },
      },
      nodes: Object.values(GROUPS).flat(),
      settings: { groups: GROUPS, run: { '@declared': ['note'] } },
    });
  });
  after(() => faces?.close());

  /** The same request refused with `code` on both faces, as a node and as its group. */
  async function refusedEverywhere(
    command: string,
    group: keyof typeof GROUPS,
    asked: Omit<Asked, 'node'>,
    code: Code,
  ) {
    const first = GROUPS[group][0] as string;
    for (const [scope, node, nodes] of [
      ['node', first, [first]],
      ['group', `@${group}`, GROUPS[group]],
    ] as const) {
      const line = await faces.line(command, { node, ...asked });
      assert.equal(line.status, 1, `${command} ${node}`);
      codes.refused(`cli ${scope}`, line, code, [...(nodes as string[])]);
      const served = await faces.served(command, { node, ...asked });
      assert.equal(served.status, 409, `${command} ${node}`);
      codes.refused(`api ${scope}`, served, code, [...(nodes as string[])]);
    }
  }

  /** A take act on the command line's preview, on a face. */
  const takeAct = async (face: 'cli' | 'api', node: string, module: string) => {
    const preview = await faces.line('take', { node, module });
    assert.equal(preview.status, 0, JSON.stringify(preview.body));
    const asked = { node, module, yes: true, digest: preview.body.digest as string };
    return face === 'cli' ? faces.line('take', asked) : faces.served('take', asked);
  };

  it('unknown_module, invalid_module, not_assigned, not_adopted', async () => {
    await refusedEverywhere('take', 'fresh', { module: 'nosuch' }, 'unknown_module');
    await refusedEverywhere('take', 'fresh', { module: 'broken' }, 'invalid_module');
    await refusedEverywhere('unassign', 'fresh', { module: 'note' }, 'not_assigned');
    await refusedEverywhere('take', 'fresh', { module: 'note' }, 'not_adopted');
  });

  it('declared_in_config: unassign of what berth.json declares under run', async () => {
    await refusedEverywhere('unassign', 'declared', { module: 'note' }, 'declared_in_config');
  });

  it('still_needed: unassign of what another assigned module needs', async () => {
    for (const module of ['base', 'top'])
      assert.equal((await faces.world.berth('assign', '@needed', module)).code, 0);
    await refusedEverywhere('unassign', 'needed', { module: 'base' }, 'still_needed');
  });

  it('already_managed, and forget: still_assigned, not_managed', async () => {
    assert.equal((await faces.world.berth('assign', '@managed', 'note')).code, 0);
    const preview = await faces.line('converge', { node: '@managed' });
    const done = await faces.line('converge', {
      node: '@managed',
      yes: true,
      digest: preview.body.digest as string,
    });
    assert.equal(done.status, 0, JSON.stringify(done.body));
    await refusedEverywhere('take', 'managed', { module: 'note' }, 'already_managed');

    // forget is the command line's alone.
    for (const [scope, node, nodes] of [
      ['node', 'm1', ['m1']],
      ['group', '@managed', ['m1', 'm2']],
    ] as const) {
      const assigned = await faces.cli('forget', node, 'note');
      assert.equal(assigned.status, 1);
      codes.refused(`cli ${scope}`, assigned, 'still_assigned', [...nodes]);
      const never = await faces.cli('forget', node, 'base');
      assert.equal(never.status, 1);
      codes.refused(`cli ${scope}`, never, 'not_managed', [...nodes]);
    }
  });

  it('not_in_account, secret_unreadable, account_stale: a take from an account that cannot stand', async () => {
    for (const node of GROUPS.adopted) {
      await mkdir(join(faces.rootOf(node), 'etc/locked/key'), { recursive: true });
      await mkdir(join(faces.rootOf(node), 'etc/keyed'), { recursive: true });
      await writeFile(join(faces.rootOf(node), 'etc/keyed/key'), 'as adopted\n');
    }
    assert.equal((await faces.world.berth('adopt', '@adopted')).code, 0);
    // A module the catalog gained after the account was taken.
    await faces.world.writeModule('late', { description: 'in the catalog since' });
    await refusedEverywhere('take', 'adopted', { module: 'late' }, 'not_in_account');

    for (const face of ['cli', 'api'] as const) {
      codes.refused(`${face} node`, await takeAct(face, 'a1', 'locked'), 'secret_unreadable', [
        'a1',
      ]);
      codes.refused(
        `${face} group`,
        await takeAct(face, '@adopted', 'locked'),
        'secret_unreadable',
        ['a1', 'a2'],
      );
    }

    // The secret changed on the machines since the account was taken.
    for (const node of GROUPS.adopted)
      await writeFile(join(faces.rootOf(node), 'etc/keyed/key'), 'changed since\n');
    for (const face of ['cli', 'api'] as const) {
      codes.refused(`${face} node`, await takeAct(face, 'a1', 'keyed'), 'account_stale', ['a1']);
      codes.refused(`${face} group`, await takeAct(face, '@adopted', 'keyed'), 'account_stale', [
        'a1',
        'a2',
      ]);
    }
  });

  it('refresh_not_on_act: --refresh with --yes, on the command line', async () => {
    const line = await faces.line(
      'converge',
      { node: 'f1', yes: true, digest: 'a'.repeat(64) },
      '--refresh',
    );
    assert.equal(line.status, 1);
    codes.refused('cli node', line, 'refresh_not_on_act');
  });

  it("refresh_not_on_act for a group: the preview's own line again, with --yes and its digest", async () => {
    const digest = (await faces.line('converge', { node: '@fresh' })).body.digest as string;
    const line = await faces.line('converge', { node: '@fresh', yes: true, digest }, '--refresh');
    assert.equal(line.status, 1);
    codes.refused('cli group', line, 'refresh_not_on_act');
    assert.match(line.body.refused ?? '', /\(berth converge @fresh --refresh\)/);
  });

  it('rotate_unknown, rotate_not_a_key: --rotate of what is no key of the node, on the command line', async () => {
    assert.equal((await faces.world.berth('assign', '@rotating', 'signer')).code, 0);
    for (const [scope, node, nodes] of [
      ['node', 't1', ['t1']],
      ['group', '@rotating', ['t1', 't2']],
    ] as const) {
      const unknown = await faces.line('converge', { node }, '--rotate', 'signin');
      assert.equal(unknown.status, 1);
      codes.refused(`cli ${scope}`, unknown, 'rotate_unknown', [...nodes]);
      assert.match(unknown.body.refused ?? '', /did you mean signing\?/);
      const random = await faces.line('converge', { node }, '--rotate', 'token');
      assert.equal(random.status, 1);
      codes.refused(`cli ${scope}`, random, 'rotate_not_a_key', [...nodes]);
    }
  });

  it('secret_not_kept and vault_unopened: a value the vault does not keep, or cannot open', async () => {
    const notKept = await faces.cli('secret', 'k1', 'keyed', 'key');
    assert.equal(notKept.status, 1);
    codes.refused('cli node', notKept, 'secret_not_kept');
    const notKeptOnAny = await faces.cli('secret', '@kept', 'keyed', 'key');
    assert.equal(notKeptOnAny.status, 1);
    codes.refused('cli group', notKeptOnAny, 'secret_not_kept');

    assert.equal((await faces.world.berth('assign', '@kept', 'keyed')).code, 0);
    const preview = await faces.line('converge', { node: '@kept' });
    const done = await faces.line('converge', {
      node: '@kept',
      yes: true,
      digest: preview.body.digest as string,
    });
    assert.equal(done.status, 0, JSON.stringify(done.body));

    // Another berth, with no identity the values were sealed to.
    const elsewhere = await mkdtemp(join(tmpdir(), 'berth-other-identity-'));
    const env = { XDG_CONFIG_HOME: elsewhere };
    const api = await apiWorld({ world: faces.world, env });
    try {
      for (const [scope, node, nodes] of [
        ['node', 'k1', ['k1']],
        ['group', '@kept', ['k1', 'k2']],
      ] as const) {
        const run = await runBerth(['--state', faces.world.state, 'converge', node, '--json'], env);
        assert.equal(run.code, 1);
        codes.refused(`cli ${scope}`, { status: run.code, body: bodyOf(run) }, 'vault_unopened', [
          ...nodes,
        ]);
        const served = await api.ask('/converge', { node }, { as: 'ops' });
        assert.equal(served.status, 409);
        const body = served.body as Body;
        codes.refused(`api ${scope}`, { status: served.status, body }, 'vault_unopened', [
          ...nodes,
        ]);
      }
      const secret = await runBerth(
        ['--state', faces.world.state, 'secret', 'k1', 'keyed', 'key', '--json'],
        env,
      );
      assert.equal(secret.code, 1);
      assert.equal(bodyOf(secret).code, 'vault_unopened');
    } finally {
      await api.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});

codes.finally();
