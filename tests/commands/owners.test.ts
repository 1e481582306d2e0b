import assert from 'node:assert/strict';
import { chmod, chown, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { actOnPreview, snapshot } from './support.ts';

/** The box's own accounts: berth resolves names through them, never through this host's. */
const PASSWD = 'root:x:0:0::/root:/bin/sh\nsvc:x:1234:2345::/var/lib/svc:/bin/false\n';
const GROUP = 'root:x:0:\nsvc:x:2345:\nstaff:x:3456:\n';

const SVC = {
  data: [{ path: '/var/lib/svc', owner: 'svc', group: 'svc', mode: '0750' }],
  secrets: {
    token: { path: '/etc/svc/token', owner: 'svc', mode: '0400' },
    plain: { path: '/etc/svc/plain-secret' },
  },
  files: {
    '/etc/svc/svc.conf': {
      owner: 'svc',
      group: 'staff',
      mode: '0640',
      content: 'token={{secret token}}\n',
    },
    '/etc/svc/plain.conf': { content: 'plain\n' },
    '/etc/svc/env': { content: 'TOKEN={{secret token}}\n' },
  },
};

/** uid:gid mode of a path on the box. */
async function owned(world: World, path: string): Promise<string> {
  const info = await stat(join(world.root, path));
  return `${info.uid}:${info.gid} ${(info.mode & 0o7777).toString(8).padStart(4, '0')}`;
}

/** Previews a converge and acts on it; the preview's text. */
async function converge(world: World): Promise<string> {
  const preview = await world.berth('converge', 'box');
  assert.equal(preview.code, 0, preview.stderr);
  const act = await actOnPreview(world, preview);
  assert.equal(act.code, 0, act.stderr);
  return preview.stdout;
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = process.getuid?.() !== 0 && 'needs root';

describe('owners, groups and modes', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ svc: SVC });
    await world.onBox('/etc/passwd', PASSWD);
    await world.onBox('/etc/group', GROUP);
    assert.equal((await world.berth('assign', 'box', 'svc')).code, 0);
  });
  afterEach(() => world.cleanup());

  it('gives what it makes the named owner, group and mode, resolved on the box; the rest root and 0644 (0600 a secret, or a file placing one)', {
    skip,
  }, async () => {
    await converge(world);
    assert.equal(await owned(world, '/var/lib/svc'), '1234:2345 0750');
    assert.equal(await owned(world, '/etc/svc/token'), '1234:0 0400');
    assert.equal(await owned(world, '/etc/svc/plain-secret'), '0:0 0600');
    assert.equal(await owned(world, '/etc/svc/svc.conf'), '1234:3456 0640');
    assert.equal(await owned(world, '/etc/svc/plain.conf'), '0:0 0644');
    // A file that places a secret is a secret's file: 0600 when its definition names no mode.
    assert.equal(await owned(world, '/etc/svc/env'), '0:0 0600');
  });

  it('keeps the owner, group and mode of a file it rewrites when the definition names none', {
    skip,
  }, async () => {
    await converge(world);
    const plain = join(world.root, '/etc/svc/plain.conf');
    await world.onBox('/etc/svc/plain.conf', 'changed by hand\n');
    await chown(plain, 77, 88);
    await chmod(plain, 0o604);
    const preview = await converge(world);
    assert.match(preview, /write \/etc\/svc\/plain\.conf \(mode 0604\): it differs/);
    assert.equal(await owned(world, '/etc/svc/plain.conf'), '77:88 0604');
  });

  it('never leaves a secret it writes readable by other users: an empty 0644 placeholder keeps owner and group, not its bits for others', {
    skip,
  }, async () => {
    // A package left an empty, world-readable file where the secret goes, root's with the
    // service's group; every local user could read what berth mints into it, were its mode
    // kept whole. (One another user owns is not kept at all: planted-secrets.test.ts.)
    await world.onBox('/etc/svc/plain-secret', '');
    const placeholder = join(world.root, '/etc/svc/plain-secret');
    await chown(placeholder, 0, 3456);
    await chmod(placeholder, 0o644);
    const preview = await converge(world);
    assert.match(preview, /\/etc\/svc\/plain-secret/);
    assert.equal(await owned(world, '/etc/svc/plain-secret'), '0:3456 0640');
    assert.ok((await stat(placeholder)).size > 0, 'the secret was written');
  });

  it('a take minting into an empty world-writable placeholder leaves nothing for other users either', {
    skip,
  }, async () => {
    assert.equal((await world.berth('unassign', 'box', 'svc')).code, 0);
    await world.onBox('/var/lib/svc/db', 'rows');
    await world.onBox('/etc/svc/plain-secret', '');
    await chmod(join(world.root, '/etc/svc/plain-secret'), 0o666);
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const mint = ['--mint', 'token', '--mint', 'plain'];
    const preview = await world.berth('take', 'box', 'svc', ...mint);
    assert.equal(preview.code, 0, preview.stderr);
    const done = await world.berth(
      'take',
      'box',
      'svc',
      ...mint,
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await owned(world, '/etc/svc/plain-secret'), '0:0 0660');
    assert.ok((await stat(join(world.root, '/etc/svc/plain-secret'))).size > 0);
  });

  it('names a wrong owner, group or mode in the preview as drift, and the act mends it', {
    skip,
  }, async () => {
    await converge(world);
    await chown(join(world.root, '/etc/svc/svc.conf'), 0, 0);
    await chown(join(world.root, '/var/lib/svc'), 0, 2345);
    await chmod(join(world.root, '/etc/svc/token'), 0o644);
    const preview = await converge(world);
    assert.match(
      preview,
      /write \/etc\/svc\/svc\.conf \(mode 0640\): its owner is 0, not svc \(1234\); its group is 0, not staff \(3456\)/,
    );
    assert.match(preview, /mend \/var\/lib\/svc: its owner is 0, not svc \(1234\)\n/);
    assert.match(
      preview,
      /rewrite token from the vault to \/etc\/svc\/token .*its mode is 0644, not 0400/,
    );
    assert.equal(await owned(world, '/etc/svc/svc.conf'), '1234:3456 0640');
    assert.equal(await owned(world, '/var/lib/svc'), '1234:2345 0750');
    assert.equal(await owned(world, '/etc/svc/token'), '1234:0 0400');
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /box is as assigned: nothing to do/);
  });

  it('blocks an owner or group the box does not have, before touching anything', {
    skip,
  }, async () => {
    await world.writeModule('svc', {
      ...SVC,
      files: { '/etc/svc/svc.conf': { owner: 'ghost', group: 'phantom', content: 'x\n' } },
    });
    const before = await snapshot(world.root);
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /blocked: svc names owner ghost for \/etc\/svc\/svc\.conf, but box has no user ghost: add it on box, or name another in the definition/,
    );
    assert.match(
      preview.stdout,
      /blocked: svc names group phantom for \/etc\/svc\/svc\.conf, but box has no group phantom/,
    );
    const act = await actOnPreview(world, preview);
    assert.equal(act.code, 1);
    assert.match(act.stderr, /the act is refused while blockers stand: svc names owner ghost/);
    assert.deepEqual(await snapshot(world.root), before);
  });

  it('a take writes a secret it mints with the owner and mode its definition names, and refuses a name the box lacks', {
    skip,
  }, async () => {
    assert.equal((await world.berth('unassign', 'box', 'svc')).code, 0);
    await world.onBox('/var/lib/svc/db', 'rows');
    await world.onBox('/etc/svc/plain-secret', 'hand-made-secret');
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const preview = await world.berth('take', 'box', 'svc', '--mint', 'token');
    const done = await world.berth(
      'take',
      'box',
      'svc',
      '--mint',
      'token',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await owned(world, '/etc/svc/token'), '1234:0 0400');

    const other = await makeWorld({
      svc: { data: ['/var/lib/svc'], secrets: { key: { path: '/etc/svc/key', owner: 'ghost' } } },
    });
    try {
      await other.onBox('/var/lib/svc/db', 'rows');
      assert.equal((await other.berth('adopt', 'box')).code, 0);
      const look = await other.berth('take', 'box', 'svc', '--mint', 'key');
      // The preview already says it, by the owner lookup converge's plans use.
      assert.match(
        look.stdout,
        /^the act would be refused: svc names owner ghost for \/etc\/svc\/key, but box has no user ghost: add it on box, or name another in the definition$/m,
      );
      const refused = await other.berth(
        'take',
        'box',
        'svc',
        '--mint',
        'key',
        '--yes',
        '--digest',
        digestOf(look.stdout),
      );
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        /svc names owner ghost for \/etc\/svc\/key, but box has no user ghost/,
      );
      assert.equal(((await other.readState()).managed as Record<string, unknown>).box, undefined);
    } finally {
      await other.cleanup();
    }
  });

  it('takes a number as it is, with no name to resolve', { skip }, async () => {
    await world.writeModule('svc', {
      files: { '/etc/svc/n.conf': { owner: 4321, group: '4322', content: 'n\n' } },
    });
    await converge(world);
    assert.equal(await owned(world, '/etc/svc/n.conf'), '4321:4322 0644');
  });
});
