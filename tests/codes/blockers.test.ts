/**
 * Each blocker's code in a preview's answer (`nodes.<name>.blockers[].code`), on both
 * faces (`--mint` is the command line's), for one node and for a group: what stands in the
 * way is read by its code, its words beside it for people.
 */

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { lchown, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Code } from '../../src/model/codes.ts';
import { type Asked, codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('blockers');

/** Nodes by the situation each test puts them in, two a group. */
const GROUPS = {
  unresolved: ['r1', 'r2'],
  needing: ['q1', 'q2'],
  holding: ['h1', 'h2'],
  differing: ['s1', 's2'],
  linked: ['l1', 'l2'],
  owned: ['o1', 'o2'],
  minting: ['m1', 'm2'],
  datum: ['d1', 'd2'],
  packaged: ['p1', 'p2'],
  valued: ['v1', 'v2'],
  unkeyed: ['u1', 'u2'],
  uncertified: ['c1', 'c2'],
  misnamed: ['n1', 'n2'],
};

/** Private keys as OpenSSL writes them: PKCS #8 PEM. */
const RSA_2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  format: 'pem',
  type: 'pkcs8',
}) as string;
const EC_P256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({
  format: 'pem',
  type: 'pkcs8',
}) as string;

const KEYED = {
  description: 'a module with a secret',
  secrets: { key: { path: '/etc/keyed/key' } },
  files: { '/etc/keyed/conf': { content: 'key={{secret key}}\n' } },
};

describe('blockers, each by its code', () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      modules: {
        needy: { description: 'needs what is not there', needs: ['ghost'] },
        base: { description: 'what top needs' },
        top: { description: 'needs base', needs: ['base'] },
        held: { description: 'data found by hand', data: ['/var/lib/held'] },
        keyed: KEYED,
        linked: {
          description: 'a file under a link',
          files: { '/etc/linked/conf': { content: 'x\n' } },
        },
        owned: {
          description: 'a file of an owner no machine has',
          files: { '/etc/owned/conf': { content: 'x\n', owner: 'nosuchuser' } },
        },
        datum: {
          description: 'data and a secret',
          data: ['/var/lib/datum'],
          secrets: { key: { path: '/etc/datum/key' } },
        },
        pkg: { description: 'a package', packages: [{ name: 'hello' }] },
        unkeyed: {
          description: 'an ec-p256 key',
          secrets: { signing: { kind: 'ec-p256', path: '/etc/unkeyed/signing.key' } },
        },
        uncertified: {
          description: 'a tls secret',
          secrets: {
            tls: {
              kind: 'tls',
              path: '/etc/uncertified/tls.key',
              cert: '/etc/uncertified/tls.pem',
              names: ['localhost'],
            },
          },
        },
        misnamed: {
          description: 'a tls secret for the name a value gives',
          values: { host: { type: 'string' } },
          secrets: {
            tls: {
              kind: 'tls',
              path: '/etc/misnamed/tls.key',
              cert: '/etc/misnamed/tls.pem',
              names: ['{{value host}}'],
            },
          },
        },
        // Its nodes are trees with no /etc/os-release: no codename to tell.
        valued: {
          description: 'values and a fact',
          values: { needed: { type: 'string' }, count: { type: 'integer', default: 1 } },
          files: {
            '/etc/valued/conf': { content: '{{value needed}} {{value count}} {{fact codename}}\n' },
          },
        },
      },
      nodes: Object.values(GROUPS).flat(),
      settings: {
        groups: GROUPS,
        values: {
          '@valued': { count: 'many', stray: 1 },
          '@misnamed': { host: 'not a name!' },
        },
      },
    });
  });
  after(() => faces?.close());

  /** Each node of `group`, and the group, previewed on `faces`, carries a blocker of `code`. */
  async function blockedEverywhere(
    command: string,
    group: keyof typeof GROUPS,
    asked: Omit<Asked, 'node'>,
    code: Code,
    { api = true, more = [] as string[] } = {},
  ) {
    const first = GROUPS[group][0] as string;
    for (const [scope, node, nodes] of [
      ['node', first, [first]],
      ['group', `@${group}`, GROUPS[group]],
    ] as const) {
      const line = await faces.line(command, { node, ...asked }, ...more);
      for (const each of nodes) codes.blocker(`cli ${scope}`, line, each, code);
      if (!api) continue;
      const served = await faces.served(command, { node, ...asked });
      assert.equal(served.status, 200, JSON.stringify(served.body));
      for (const each of nodes) codes.blocker(`api ${scope}`, served, each, code);
    }
  }

  /** Converge `group` on its preview's digest, on the command line: done. */
  async function converged(group: string) {
    const preview = await faces.line('converge', { node: group });
    const done = await faces.line('converge', {
      node: group,
      yes: true,
      digest: preview.body.digest as string,
    });
    assert.equal(done.status, 0, JSON.stringify(done.body));
  }

  /** A file written by hand on a machine, with its directories. */
  const plant = async (root: string, path: string) => {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), 'by hand\n');
  };

  /** A file of this text on a machine, with its directories. */
  const plantText = async (root: string, path: string, text: string) => {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  };

  const onEach = async (group: keyof typeof GROUPS, made: (root: string) => Promise<unknown>) => {
    for (const node of GROUPS[group]) await made(faces.rootOf(node));
  };

  it('does_not_resolve, needs_not_running, packages_not_here: in converge previews', async () => {
    assert.equal((await faces.world.berth('assign', '@unresolved', 'needy')).code, 1);
    await blockedEverywhere('converge', 'unresolved', {}, 'does_not_resolve');
    for (const module of ['base', 'top'])
      assert.equal((await faces.world.berth('assign', '@needing', module)).code, 0);
    await blockedEverywhere('converge', 'needing', { filter: 'top' }, 'needs_not_running');
    assert.equal((await faces.world.berth('assign', '@packaged', 'pkg')).code, 0);
    await blockedEverywhere('converge', 'packaged', {}, 'packages_not_here');
  });

  it('held_not_managed, link, no_such_account: what the machine holds stands in the way', async () => {
    await onEach('holding', (root) => plant(root, 'var/lib/held/data'));
    assert.equal((await faces.world.berth('assign', '@holding', 'held')).code, 0);
    await blockedEverywhere('converge', 'holding', {}, 'held_not_managed');

    // A link another user could have placed, on the way to the module's file.
    await onEach('linked', async (root) => {
      await mkdir(join(root, 'etc'), { recursive: true });
      await mkdir(join(root, 'elsewhere'), { recursive: true });
      await symlink(join(root, 'elsewhere'), join(root, 'etc/linked'));
      await lchown(join(root, 'etc/linked'), 65534, 65534);
    });
    assert.equal((await faces.world.berth('assign', '@linked', 'linked')).code, 0);
    await blockedEverywhere('converge', 'linked', {}, 'link');

    assert.equal((await faces.world.berth('assign', '@owned', 'owned')).code, 0);
    await blockedEverywhere('converge', 'owned', {}, 'no_such_account');
  });

  it('value_missing, value_wrong_type, value_undeclared, fact_unknown: what a module reads cannot be had', async () => {
    assert.equal((await faces.world.berth('assign', '@valued', 'valued')).code, 0);
    for (const code of [
      'value_missing',
      'value_wrong_type',
      'value_undeclared',
      'fact_unknown',
    ] as const)
      await blockedEverywhere('converge', 'valued', {}, code);
  });

  it("secret_differs: a secret changed by hand from the vault's value", async () => {
    assert.equal((await faces.world.berth('assign', '@differing', 'keyed')).code, 0);
    await converged('@differing');
    await onEach('differing', (root) => writeFile(join(root, 'etc/keyed/key'), 'by hand\n'));
    await blockedEverywhere('converge', 'differing', {}, 'secret_differs');
  });

  it('not_a_key, certificate_refused: a hand-made key a take cannot keep', async () => {
    // An RSA key of 2048 bits where an ec-p256 key is named; a tls key with no certificate.
    await onEach('unkeyed', (root) => plantText(root, 'etc/unkeyed/signing.key', RSA_2048));
    await onEach('uncertified', (root) => plantText(root, 'etc/uncertified/tls.key', EC_P256));
    assert.equal((await faces.world.berth('adopt', '@unkeyed')).code, 0);
    assert.equal((await faces.world.berth('adopt', '@uncertified')).code, 0);
    await blockedEverywhere('take', 'unkeyed', { module: 'unkeyed' }, 'not_a_key');
    await blockedEverywhere(
      'take',
      'uncertified',
      { module: 'uncertified' },
      'certificate_refused',
    );
  });

  it('certificate_name: a tls secret for a name a value makes no name', async () => {
    assert.equal((await faces.world.berth('assign', '@misnamed', 'misnamed')).code, 0);
    await blockedEverywhere('converge', 'misnamed', {}, 'certificate_name');
  });

  it('mint_over_data: a take that would mint a secret where data was found', async () => {
    await onEach('datum', (root) => plant(root, 'var/lib/datum/data'));
    assert.equal((await faces.world.berth('adopt', '@datum')).code, 0);
    await blockedEverywhere('take', 'datum', { module: 'datum' }, 'mint_over_data');
  });

  it('mint_found, mint_not_a_secret, mint_kept: --mint on a take, on the command line', async () => {
    // keyed run by berth, then forgotten: its value stays on the machines and in the vault.
    assert.equal((await faces.world.berth('assign', '@minting', 'keyed')).code, 0);
    await converged('@minting');
    assert.equal((await faces.world.berth('unassign', '@minting', 'keyed')).code, 0);
    assert.equal((await faces.world.berth('forget', '@minting', 'keyed')).code, 0);
    assert.equal((await faces.world.berth('adopt', '@minting')).code, 0);
    const take = { module: 'keyed' };
    await blockedEverywhere('take', 'minting', take, 'mint_found', {
      api: false,
      more: ['--mint', 'key'],
    });
    await blockedEverywhere('take', 'minting', take, 'mint_not_a_secret', {
      api: false,
      more: ['--mint', 'nope'],
    });
    // Gone from the machines: the vault's value is what a take restores.
    await onEach('minting', (root) => rm(join(root, 'etc/keyed/key')));
    assert.equal((await faces.world.berth('adopt', '@minting')).code, 0);
    await blockedEverywhere('take', 'minting', take, 'mint_kept', {
      api: false,
      more: ['--mint', 'key'],
    });
  });
});

codes.finally();
