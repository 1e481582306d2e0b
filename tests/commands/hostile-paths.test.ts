/**
 * A service's own user gains nothing from berth acting as root (issue 21), through the
 * commands on a rooted node: the user `app` (uid 1234 on the box) owns /srv/app and places
 * links there, and every command that would read, write, chown or chmod through one says
 * so as a blocker, in words naming the path, the link and its owner, and does nothing.
 * The links are made by root and given to app with `chown -h`: what matters is whose they
 * are, and app could have made each of them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { makeWorld, type World } from '../helpers/world.ts';
import { actOnPreview, convergeBox, previewDigest, stateFiles } from './support.ts';

const sh = promisify(execFile);

const PASSWD = 'root:x:0:0::/root:/bin/sh\napp:x:1234:1234::/srv/app:/bin/sh\n';
const GROUP = 'root:x:0:\napp:x:1234:\n';

/** A root-only secret on the box that app must never get at: a line of it is the marker. */
const SHADOW = 'root:$6$berth-hostile-marker$xyz:19000:0:99999:7:::\n';
const MARKER = 'berth-hostile-marker';

const APP = {
  data: [{ path: '/srv/app/data', owner: 'app', group: 'app', mode: '0750' }],
  secrets: { key: { path: '/srv/app/key', owner: 'app', mode: '0400' } },
  files: {
    '/srv/app/conf/app.ini': { owner: 'app', mode: '0640', content: 'key = {{secret key}}\n' },
  },
};

const WORDS = 'berth does not follow links that another user could have placed';

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = process.getuid?.() !== 0 && 'needs root: the links must belong to another user';

describe('links a service user places, on a rooted node', () => {
  let world: World;
  /** Runs a shell on the box's files, as root. */
  const box = (script: string) => sh('sh', ['-c', script], { cwd: world.root });
  const owned = async (path: string) => {
    const info = await stat(join(world.root, path));
    return `${info.uid}:${info.gid} ${(info.mode & 0o7777).toString(8).padStart(4, '0')}`;
  };

  beforeEach(async () => {
    world = await makeWorld({ app: APP });
    await world.onBox('/etc/passwd', PASSWD);
    await world.onBox('/etc/group', GROUP);
    await world.onBox('/etc/shadow', SHADOW);
    await box(
      'chmod 0600 etc/shadow && mkdir -p srv/app root-only && chmod 0700 root-only && echo root > root-only/file && chown 1234:1234 srv/app',
    );
  });
  afterEach(() => world.cleanup());

  /** app managed by a converge, as an honest install leaves it. */
  const installed = async () => {
    assert.equal((await world.berth('assign', 'box', 'app')).code, 0);
    const act = await convergeBox(world);
    assert.equal(act.code, 0, act.stderr);
  };

  it('a data directory swapped for a link to a root-only directory: blocked, never chowned through', {
    skip,
  }, async () => {
    await installed();
    await box(
      'mv srv/app/data srv/app/data.old && ln -s ../../root-only srv/app/data && chown -h 1234:1234 srv/app/data',
    );
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      new RegExp(`blocked: /srv/app/data is a symbolic link owned by app; ${WORDS}`),
    );
    const act = await actOnPreview(world, preview);
    assert.equal(act.code, 1);
    assert.equal(await owned('/root-only'), '0:0 0700');
  });

  it('a secret that is a link to a root-only file is never read: adopt names the link, take is refused', {
    skip,
  }, async () => {
    await box('ln -s ../../etc/shadow srv/app/key && chown -h 1234:1234 srv/app/key');
    const adopt = await world.berth('adopt', 'box');
    assert.equal(adopt.code, 0, adopt.stderr);
    assert.match(
      adopt.stdout,
      new RegExp(
        `secret key at /srv/app/key: /srv/app/key is a symbolic link owned by app; ${WORDS}`,
      ),
    );
    const preview = await world.berth('take', 'box', 'app');
    assert.match(
      preview.stdout,
      /the act would be refused: \/srv\/app\/key is a symbolic link owned by app/,
    );
    const act = await world.berth(
      'take',
      'box',
      'app',
      '--yes',
      '--digest',
      await previewDigest(world, 'take', 'box', 'app'),
    );
    assert.equal(act.code, 1);
    for (const [file, text] of Object.entries(await stateFiles(world)))
      assert.ok(!text.includes(MARKER), `${file} holds the root-only file's line`);
  });

  it('a directory above a file swapped for a link to a root directory: blocked, nothing written there', {
    skip,
  }, async () => {
    await installed();
    await box(
      'rm -r srv/app/conf && ln -s ../../etc srv/app/conf && chown -h 1234:1234 srv/app/conf',
    );
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      new RegExp(
        `blocked: /srv/app/conf/app.ini: /srv/app/conf is a symbolic link owned by app; ${WORDS}`,
      ),
    );
    assert.equal((await actOnPreview(world, preview)).code, 1);
    await assert.rejects(stat(join(world.root, 'etc/app.ini')), { code: 'ENOENT' });
  });

  it('a file made a link to a root-only file: the preview shows none of it, and nothing is written', {
    skip,
  }, async () => {
    await installed();
    await box(
      'rm srv/app/conf/app.ini && ln -s ../../../etc/shadow srv/app/conf/app.ini && chown -h 1234:1234 srv/app/conf/app.ini',
    );
    const preview = await world.berth('converge', 'box');
    assert.ok(!preview.stdout.includes(MARKER), preview.stdout);
    assert.match(
      preview.stdout,
      /blocked: \/srv\/app\/conf\/app.ini is a symbolic link owned by app/,
    );
    assert.equal((await actOnPreview(world, preview)).code, 1);
    assert.equal(await readFile(join(world.root, 'etc/shadow'), 'utf8'), SHADOW);
    assert.equal(await owned('/etc/shadow'), '0:0 0600');
  });

  it('links root placed are followed as before', { skip }, async () => {
    await box('mkdir -p var/lib/app-real && ln -s app-real var/lib/app-link');
    await world.writeModule('rooted', {
      data: ['/var/lib/app-link/data'],
      files: { '/var/lib/app-link/f': { content: 'x\n' } },
    });
    assert.equal((await world.berth('assign', 'box', 'rooted')).code, 0);
    const act = await convergeBox(world);
    assert.equal(act.code, 0, act.stderr);
    assert.equal(await readFile(join(world.root, 'var/lib/app-real/f'), 'utf8'), 'x\n');
  });
});
