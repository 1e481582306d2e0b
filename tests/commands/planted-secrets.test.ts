/**
 * A service's own user gains no secret by planting a file where berth writes one, on a
 * rooted node: the user `app` (uid 1234 on the box) owns /srv/app, and `touch`es the path
 * of a secret, or of a file placing one, whose definition names no owner. Whatever the user
 * left there, berth writes the secret as root's, names the owner in the preview, and the
 * user cannot read it. The user's commands run as uid 1234 (setpriv), with its own rights.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { actOnPreview, convergeBox } from './support.ts';

const sh = promisify(execFile);

const PASSWD = 'root:x:0:0::/root:/bin/sh\napp:x:1234:1234::/srv/app:/bin/sh\n';
const GROUP = 'root:x:0:\napp:x:1234:\n';

/** As the examples were: a mode for the secret, no owner. */
const APP = {
  data: [{ path: '/srv/app/data', owner: 'app', group: 'app', mode: '0750' }],
  secrets: {
    token: { path: '/srv/app/conf/token', mode: '0640' },
    key: { in: '/srv/app/conf/app.ini', match: '^key = (\\S+)$' },
  },
  files: { '/srv/app/conf/app.ini': { content: 'key = {{secret key}}\n' } },
};

describe('a secret file a service user planted, on a rooted node', {
  skip: process.getuid?.() !== 0 && 'needs root: the planted file must be another user’s',
}, () => {
  let world: World;
  const owned = async (path: string) => {
    const info = await stat(join(world.root, path));
    return `${info.uid}:${info.gid} ${(info.mode & 0o7777).toString(8).padStart(4, '0')}`;
  };
  /** What the user does on the box, with its own rights, in its own directory. */
  const asApp = (script: string) =>
    sh('setpriv', ['--reuid=1234', '--regid=1234', '--clear-groups', 'sh', '-c', script], {
      cwd: join(world.root, 'srv/app/conf'),
    });
  /** Whether the user can read a file of the box, and what. */
  const readByApp = (path: string) =>
    asApp(`cat ${join(world.root, path)}`).then(
      ({ stdout }) => stdout,
      () => undefined,
    );
  const secretOf = async (name: string) => {
    const shown = await world.berth('secret', 'box', 'app', name);
    assert.equal(shown.code, 0, shown.stderr);
    return shown.stdout.trim();
  };
  const converge = async () => {
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await actOnPreview(world, preview);
    assert.equal(act.code, 0, act.stderr);
    return preview.stdout;
  };

  beforeEach(async () => {
    world = await makeWorld({ app: APP });
    await world.onBox('/etc/passwd', PASSWD);
    await world.onBox('/etc/group', GROUP);
    await sh('sh', ['-c', 'mkdir -p srv/app/conf && chown -R 1234:1234 srv/app'], {
      cwd: world.root,
    });
    // The user walks to its directory through the box as any user walks to theirs.
    await sh('chmod', ['o+x', dirname(world.root), world.root]);
    assert.equal((await world.berth('assign', 'box', 'app')).code, 0);
  });
  afterEach(() => world.cleanup());

  it('a secret whose path the user touched before the preview is minted as root’s, and the preview says whose it was', async () => {
    await asApp('touch token && chmod 0666 token');
    assert.equal(await owned('/srv/app/conf/token'), '1234:1234 0666');
    const preview = await converge();
    // Berth wrote the secret there, and the user cannot read it.
    assert.equal(
      await readFile(join(world.root, 'srv/app/conf/token'), 'utf8'),
      await secretOf('token'),
    );
    assert.equal(await readByApp('/srv/app/conf/token'), undefined);
    assert.equal(await owned('/srv/app/conf/token'), '0:0 0640');
    assert.match(
      preview,
      /mint token into the vault and write it to \/srv\/app\/conf\/token \(owner 0:0, now 1234:1234\)/,
    );
  });

  it('a secret, or a file placing one, that the user swapped for a file of its own is written back as root’s', async () => {
    const act = await convergeBox(world);
    assert.equal(act.code, 0, act.stderr);
    await asApp('rm -f token app.ini && touch token app.ini && chmod 0644 token app.ini');
    const preview = await converge();
    assert.equal(await readByApp('/srv/app/conf/token'), undefined);
    assert.equal(await readByApp('/srv/app/conf/app.ini'), undefined);
    assert.equal(
      await readFile(join(world.root, 'srv/app/conf/app.ini'), 'utf8'),
      `key = ${await secretOf('key')}\n`,
    );
    assert.equal(await owned('/srv/app/conf/token'), '0:0 0640');
    assert.equal(await owned('/srv/app/conf/app.ini'), '0:0 0600');
    assert.match(
      preview,
      /restore token from the vault to \/srv\/app\/conf\/token \(owner 0:0, now 1234:1234\)/,
    );
    assert.match(
      preview,
      /write \/srv\/app\/conf\/app\.ini \(mode 0600, owner 0:0, now 1234:1234\): it differs/,
    );
  });

  it('a take minting into a path the user touched writes it as root’s too', async () => {
    assert.equal((await world.berth('unassign', 'box', 'app')).code, 0);
    await world.onBox('/srv/app/data/rows', 'rows');
    await asApp('touch token');
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const mint = ['--mint', 'token', '--mint', 'key'];
    const preview = await world.berth('take', 'box', 'app', ...mint);
    assert.equal(preview.code, 0, preview.stderr);
    const digest = digestOf(preview.stdout);
    const done = await world.berth('take', 'box', 'app', ...mint, '--yes', '--digest', digest);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await readByApp('/srv/app/conf/token'), undefined);
    assert.equal(await owned('/srv/app/conf/token'), '0:0 0640');
    assert.match(
      preview.stdout,
      /secret token: to be minted by berth, at \/srv\/app\/conf\/token \(owner 0:0, now 1234:1234\)/,
    );
  });

  it('a file of the user’s holding the value found in it stays the user’s; a value new to it makes it root’s', async () => {
    // The user's own app.ini, with the key its service reads as the user.
    await asApp('printf "key = UsersOwnKey42\\n" > app.ini && chmod 0640 app.ini');
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const take = await world.berth('take', 'box', 'app');
    assert.equal(take.code, 0, take.stderr);
    const taken = await world.berth(
      'take',
      'box',
      'app',
      '--yes',
      '--digest',
      digestOf(take.stdout),
    );
    assert.equal(taken.code, 0, taken.stderr);
    const preview = await converge();
    assert.doesNotMatch(preview, /app\.ini/);
    assert.equal(await owned('/srv/app/conf/app.ini'), '1234:1234 0640');
    assert.equal(await readByApp('/srv/app/conf/app.ini'), 'key = UsersOwnKey42\n');

    // The token, which the user never had, placed in that file too: the file is root's now.
    await world.writeModule('app', {
      ...APP,
      files: {
        '/srv/app/conf/app.ini': { content: 'key = {{secret key}}\ntoken = {{secret token}}\n' },
      },
    });
    const placing = await converge();
    assert.match(
      placing,
      /write \/srv\/app\/conf\/app\.ini \(mode 0600, owner 0:0, now 1234:1234\): it differs/,
    );
    assert.equal(await owned('/srv/app/conf/app.ini'), '0:0 0600');
    assert.equal(await readByApp('/srv/app/conf/app.ini'), undefined);
    assert.equal(await readByApp('/srv/app/conf/token'), undefined);
  });

  it('a secret already in the user’s hands (its file the user’s) is named as drift and taken back', async () => {
    const act = await convergeBox(world);
    assert.equal(act.code, 0, act.stderr);
    // What berth before this rule left: the secrets in files the user owns.
    await sh('chown', [
      '1234:1234',
      join(world.root, 'srv/app/conf/token'),
      join(world.root, 'srv/app/conf/app.ini'),
    ]);
    const preview = await converge();
    assert.equal(await readByApp('/srv/app/conf/token'), undefined);
    assert.equal(await readByApp('/srv/app/conf/app.ini'), undefined);
    assert.match(
      preview,
      /rewrite token from the vault to \/srv\/app\/conf\/token \(mode 0640\): its owner is 1234, not 0; its group is 1234, not 0/,
    );
    assert.match(
      preview,
      /write \/srv\/app\/conf\/app\.ini \(mode 0600\): its owner is 1234, not 0; its group is 1234, not 0/,
    );
    assert.equal(await owned('/srv/app/conf/token'), '0:0 0640');
    assert.equal(await owned('/srv/app/conf/app.ini'), '0:0 0600');
    // Mended, it stays so: the next preview has nothing to do.
    const again = await world.berth('converge', 'box', '--detailed-exitcode');
    assert.equal(again.code, 0, again.stdout);
  });
});
