import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BERTH, GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import {
  actOnPreview,
  convergeBox,
  modeOf,
  previewDigest,
  snapshot,
  vaultValues,
} from './support.ts';

type Managed = Record<string, Record<string, { started: boolean; via: string }>>;

/** What an install of postgres and gitea says, in order, up to gitea's start hook. */
const INSTALL_UP_TO_GITEA_START = [
  'berth manages postgres on box',
  'created /var/lib/postgresql',
  'minted password into the vault and wrote it to /etc/postgres/password',
  'wrote /etc/postgres/pg.conf',
  'running start of postgres …',
  'ran start of postgres',
  'berth manages gitea on box',
  'created /var/lib/gitea',
  'minted db_password into the vault and wrote it to /etc/gitea/db_password',
  'minted admin_token into the vault and wrote it to /etc/gitea/admin_token',
  'wrote /etc/gitea/app.ini',
];

describe('berth converge', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('previews an install step by step, ending with the digest, and changes nothing', async () => {
    await world.berth('assign', 'box', 'postgres');
    const before = await snapshot(world.root);
    const run = await world.berth('converge', 'box');
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.slice(0, -1), [
      'converge box',
      'install postgres:',
      '  record that berth manages it, not yet started',
      '  create /var/lib/postgresql',
      '  mint password into the vault and write it to /etc/postgres/password',
      '  write /etc/postgres/pg.conf (mode 0640)',
      '  run start: touch "$BERTH_ROOT/started-postgres"',
    ]);
    assert.match(lines.at(-1) ?? '', /^digest [0-9a-f]{64}$/);
    assert.deepEqual(await snapshot(world.root), before);
    assert.deepEqual((await world.readState()).managed, {});
    assert.equal((await world.journal()).filter((entry) => entry.act === 'converge').length, 0);
  });

  it('installs, saying each step in order, with secrets 0600 and files rendered', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const run = await convergeBox(world);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      [
        ...INSTALL_UP_TO_GITEA_START,
        'running start of gitea …',
        'ran start of gitea',
        'box is as assigned',
        '',
      ].join('\n'),
    );
    const password = await readFile(join(world.root, 'etc/gitea/db_password'), 'utf8');
    assert.equal(await modeOf(join(world.root, 'etc/gitea/db_password')), '600');
    assert.equal(await modeOf(join(world.root, 'etc/gitea/app.ini')), '640');
    assert.equal(
      await readFile(join(world.root, 'etc/gitea/app.ini'), 'utf8'),
      `[database]\nPASSWD = ${password}\n`,
    );
    assert.equal((await vaultValues(world))['box/gitea/db_password'], password);
    assert.equal(await readFile(join(world.root, 'started-gitea'), 'utf8'), 'gitea on box\n');
    for (const entry of await world.journal()) {
      assert.ok(!JSON.stringify(entry).includes(password), 'no secret in the journal');
    }
    const managed = (await world.readState()).managed as Managed;
    assert.equal(managed.box?.gitea?.started, true);
    assert.equal(managed.box?.postgres?.via, 'converge');
  });

  it('removes what a write that died left beside a file it writes, and nothing else', async () => {
    const etc = join(world.root, 'etc/postgres');
    await mkdir(etc, { recursive: true });
    const leftovers = ['.password.0123456789ab.tmp', '.pg.conf.abcdef012345.tmp'];
    const kept = ['.other.0123456789ab.tmp', 'password.tmp', '.password.notours.tmp'];
    for (const name of [...leftovers, ...kept]) await writeFile(join(etc, name), 'old secret');
    await world.berth('assign', 'box', 'postgres');
    const run = await convergeBox(world);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((await readdir(etc)).sort(), [...kept, 'password', 'pg.conf'].sort());
  });

  it('says each step as it is done, not only at the end', async () => {
    // The start hook waits for a file the test makes only once it has read the
    // step before it on standard output; said only at the end, the hook gives up.
    await world.writeModule('postgres', {
      ...POSTGRES,
      start:
        'for i in $(seq 100); do [ -e "$BERTH_ROOT/go" ] && exit 0; sleep 0.1; done; echo never told to go; exit 1',
    });
    await world.berth('assign', 'box', 'postgres');
    const digest = await previewDigest(world, 'converge', 'box');
    const child = spawn(process.execPath, [
      BERTH,
      '--state',
      world.state,
      'converge',
      'box',
      '--yes',
      '--digest',
      digest,
    ]);
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', async (chunk) => {
      stdout += chunk;
      if (stdout.includes('wrote /etc/postgres/pg.conf\n'))
        await writeFile(join(world.root, 'go'), '');
    });
    const code = await new Promise((done) => child.on('close', done));
    assert.equal(code, 0, stderr);
    assert.match(stdout, /\nran start of postgres\nbox is as assigned\n$/);
    assert.equal(
      stdout.match(/wrote \/etc\/postgres\/pg\.conf/g)?.length,
      1,
      'each step said once',
    );
  });

  it('says when there is nothing to do, and then --yes alone is enough', async () => {
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /^converge box\nbox is as assigned: nothing to do, so yes alone is enough\ndigest [0-9a-f]{64}\n$/,
    );
    const run = await world.berth('converge', 'box', '--yes');
    assert.deepEqual(run, { code: 0, stdout: 'box is as assigned: nothing to do\n', stderr: '' });
  });

  it('asks for the digest when there is something to do', async () => {
    await world.berth('assign', 'box', 'postgres');
    const run = await world.berth('converge', 'box', '--yes');
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr:
        'a converge acts on a preview: preview it (berth converge box), then act with yes and its digest\n',
    });
    await assert.rejects(access(join(world.root, 'var/lib/postgresql')));
  });

  it('refuses a stale digest, saying which assignment or definition changed', async () => {
    await world.berth('assign', 'box', 'postgres');
    const digest = await previewDigest(world, 'converge', 'box');
    await world.writeModule('redis', { data: ['/var/lib/redis'] });
    await world.berth('assign', 'box', 'redis');
    await world.writeModule('postgres', { ...POSTGRES, description: 'PostgreSQL 16' });
    const run = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr: `the preview changed since digest ${digest.slice(0, 12)}…: box is now to run redis; the definition of postgres changed; preview again\n`,
    });
    await assert.rejects(access(join(world.root, 'var/lib/postgresql')), 'nothing was done');
  });

  it('refuses a stale digest, saying which file changed on the machine', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    await world.onBox('/etc/postgres/pg.conf', 'password=by-hand\n');
    const digest = await previewDigest(world, 'converge', 'box');
    await world.onBox('/etc/postgres/pg.conf', 'password=by-hand-again\n');
    const run = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `the preview changed since digest ${digest.slice(0, 12)}…: file /etc/postgres/pg.conf changed on box; preview again\n`,
    );
  });

  it('updates what berth manages: rewrites a changed file, restores a missing secret', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    const password = (await vaultValues(world))['box/postgres/password'];
    const conf = await readFile(join(world.root, 'etc/postgres/pg.conf'), 'utf8');
    await world.onBox('/etc/postgres/pg.conf', 'password=by-hand\n');
    await rm(join(world.root, 'etc/postgres/password'));

    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /^converge box\nupdate postgres:\n {2}restore password from the vault to \/etc\/postgres\/password\n {2}write \/etc\/postgres\/pg\.conf \(mode 0640\): it differs from what berth writes\n/,
    );
    const run = await actOnPreview(world, preview);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await readFile(join(world.root, 'etc/postgres/password'), 'utf8'), password);
    assert.equal(await readFile(join(world.root, 'etc/postgres/pg.conf'), 'utf8'), conf);
  });

  it('blocks a managed secret changed by hand rather than overwrite it', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    await world.onBox('/etc/postgres/password', 'by-hand\n');
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0);
    assert.match(
      preview.stdout,
      /\nblocked: secret password of postgres at \/etc\/postgres\/password on box is not the one in berth's vault; berth will not overwrite it: move it aside and berth restores the vault's\n/,
    );
    const run = await actOnPreview(world, preview);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^the act is refused while a blocker stands: secret password/);
    assert.equal(await readFile(join(world.root, 'etc/postgres/password'), 'utf8'), 'by-hand\n');
  });

  it('blocks a module whose data the machine holds but berth does not manage: take it first', async () => {
    await world.onBox('/var/lib/gitea/repositories/a.git', 'objects');
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, 'a preview with blockers is still a preview');
    assert.match(
      preview.stdout,
      /\nblocked: box holds gitea's data \(\/var\/lib\/gitea\) but berth does not manage gitea: take gitea first\nthe act will be refused while a blocker stands\ndigest [0-9a-f]{64}\n$/,
    );
    const before = await snapshot(world.root);
    const run = await actOnPreview(world, preview);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      "the act is refused while a blocker stands: box holds gitea's data (/var/lib/gitea) but berth does not manage gitea: take gitea first\n",
    );
    assert.deepEqual(await snapshot(world.root), before, 'nothing was done, postgres neither');
  });

  it('blocks a module that does not resolve', async () => {
    await world.berth('assign', 'box', 'gitea');
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /\nblocked: gitea does not resolve: it needs postgres, which box is not assigned\n/,
    );
  });

  it('with --filter, previews and acts on that module alone', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.writeModule('redis', { data: ['/var/lib/redis'] });
    await world.berth('assign', 'box', 'redis');
    const preview = await world.berth('converge', 'box', '--filter', 'redis');
    assert.match(
      preview.stdout,
      /^converge box, redis alone\ninstall redis:\n {2}record that berth manages it\n {2}create \/var\/lib\/redis\ndigest /,
    );
    const unfiltered = await actOnPreview(world, preview);
    assert.equal(unfiltered.code, 1);
    assert.match(
      unfiltered.stderr,
      /that digest is of a preview of berth converge box --filter redis, not of berth converge box;/,
    );

    const run = await actOnPreview(world, preview, '--filter', 'redis');
    assert.equal(run.code, 0, run.stderr);
    await access(join(world.root, 'var/lib/redis'));
    await assert.rejects(access(join(world.root, 'var/lib/postgresql')), 'postgres untouched');
    assert.deepEqual(Object.keys(((await world.readState()).managed as Managed).box ?? {}), [
      'redis',
    ]);
  });

  it('with --filter, blocks a module whose needs berth does not run yet', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const preview = await world.berth('converge', 'box', '--filter', 'gitea');
    assert.equal(preview.code, 0);
    assert.match(
      preview.stdout,
      /^blocked: gitea needs postgres, which berth does not run on box yet: converge box --filter postgres first, or converge box as a whole$/m,
    );
    const run = await actOnPreview(world, preview, '--filter', 'gitea');
    assert.equal(run.code, 1);
    await assert.rejects(access(join(world.root, 'var/lib/gitea')), 'nothing installed');

    assert.equal((await convergeBox(world, '--filter', 'postgres')).code, 0);
    const then = await convergeBox(world, '--filter', 'gitea');
    assert.equal(then.code, 0, then.stderr);
    assert.match(then.stdout, /ran start of gitea/);
  });

  it('releases a module before the modules it needs', async () => {
    const stopLog = (name: string) => `echo ${name} >> "$BERTH_ROOT/stopped"`;
    await world.writeModule('db', { stop: stopLog('db') });
    await world.writeModule('web', { needs: ['db'], stop: stopLog('web') });
    await world.berth('assign', 'box', 'db');
    await world.berth('assign', 'box', 'web');
    assert.equal((await convergeBox(world)).code, 0);
    await world.berth('unassign', 'box', 'web');
    await world.berth('unassign', 'box', 'db');
    const run = await convergeBox(world);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await readFile(join(world.root, 'stopped'), 'utf8'), 'web\ndb\n');
  });

  it('stops at a failing start hook, records what was done, and carries on later', async () => {
    await world.writeModule('gitea', { ...GITEA, start: 'echo gitea will not start >&2; exit 3' });
    await world.berth('assign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');
    const run = await convergeBox(world);
    assert.equal(run.code, 1);
    // The hook's words are streamed as it writes them; the refusal repeats them.
    assert.equal(
      run.stdout,
      [...INSTALL_UP_TO_GITEA_START, 'running start of gitea …', '  gitea will not start', ''].join(
        '\n',
      ),
    );
    assert.equal(
      run.stderr,
      'converge of box stopped at gitea: start of gitea failed (exit 3): gitea will not start\n',
    );
    const managed = ((await world.readState()).managed as Managed).box;
    assert.equal(managed?.postgres?.started, true);
    assert.equal(managed?.gitea?.started, false);
    const token = (await vaultValues(world))['box/gitea/admin_token'];
    const last = (await world.journal()).at(-1);
    assert.equal(last?.outcome, 'failed', 'begun and stopped at a step, not refused');
    // The journal keeps what was said, not what the hooks streamed.
    assert.equal(
      last?.said,
      INSTALL_UP_TO_GITEA_START.filter((line) => !line.startsWith('running ')).join('\n'),
    );

    await world.writeModule('gitea', GITEA);
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /^converge box\nupdate gitea:\n {2}run start: echo "\$BERTH_MODULE on \$BERTH_NODE" > "\$BERTH_ROOT\/started-gitea"\ndigest /,
    );
    const again = await actOnPreview(world, preview);
    assert.deepEqual(again, {
      code: 0,
      stdout: 'running start of gitea …\nran start of gitea\nbox is as assigned\n',
      stderr: '',
    });
    assert.equal(
      (await vaultValues(world))['box/gitea/admin_token'],
      token,
      'nothing minted twice',
    );
    assert.equal(((await world.readState()).managed as Managed).box?.gitea?.started, true);
  });

  it('stops at a file it cannot write: says what was done, and the next converge carries on', async () => {
    // A module's directories and files go to the machine together; b's directory is a
    // file on the machine, so b's write fails, after a's and before c's.
    await world.writeModule('app', {
      description: 'three secrets and a file carrying two',
      data: ['/var/lib/app'],
      secrets: {
        a: { path: '/etc/app/a' },
        b: { path: '/etc/app/blocked/b' },
        c: { path: '/etc/app/c' },
      },
      files: { '/etc/app/app.conf': { mode: '0640', content: 'a={{secret a}}\nc={{secret c}}\n' } },
      start: 'touch "$BERTH_ROOT/started-app"',
    });
    await world.onBox('/etc/app/blocked', 'a file where a directory should be\n');
    await world.berth('assign', 'box', 'app');
    const run = await convergeBox(world);
    assert.equal(run.code, 1);
    const done = [
      'berth manages app on box',
      'created /var/lib/app',
      'minted a into the vault and wrote it to /etc/app/a',
    ];
    assert.equal(run.stdout, [...done, ''].join('\n'));
    assert.match(
      run.stderr,
      /^converge of box stopped at app: write \/etc\/app\/blocked\/b failed: .+\n$/,
    );
    assert.equal((await world.journal()).at(-1)?.said, done.join('\n'));
    assert.deepEqual((await readdir(join(world.root, 'etc/app'))).sort(), ['a', 'blocked']);
    await assert.rejects(access(join(world.root, 'started-app')));
    assert.equal(((await world.readState()).managed as Managed).box?.app?.started, false);
    const a = await readFile(join(world.root, 'etc/app/a'), 'utf8');
    assert.equal((await vaultValues(world))['box/app/a'], a);

    await rm(join(world.root, 'etc/app/blocked'));
    const preview = await world.berth('converge', 'box');
    // b and c were minted into the vault before the batch: restored, never minted anew.
    assert.deepEqual(preview.stdout.trimEnd().split('\n').slice(0, -1), [
      'converge box',
      'update app:',
      '  restore b from the vault to /etc/app/blocked/b',
      '  restore c from the vault to /etc/app/c',
      '  write /etc/app/app.conf (mode 0640): it is missing',
      '  run start: touch "$BERTH_ROOT/started-app"',
    ]);
    const again = await actOnPreview(world, preview);
    assert.equal(again.code, 0, again.stderr);
    const vault = await vaultValues(world);
    assert.equal(await readFile(join(world.root, 'etc/app/a'), 'utf8'), a);
    assert.equal(await readFile(join(world.root, 'etc/app/blocked/b'), 'utf8'), vault['box/app/b']);
    assert.equal(
      await readFile(join(world.root, 'etc/app/app.conf'), 'utf8'),
      `a=${a}\nc=${vault['box/app/c']}\n`,
    );
    await access(join(world.root, 'started-app'));
  });

  it('installs again with the secret the vault kept, never minting over it', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    const kept = (await vaultValues(world))['box/postgres/password'];
    await world.berth('unassign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    // The operator wipes what the release left, then assigns it again.
    await rm(join(world.root, 'var'), { recursive: true });
    await rm(join(world.root, 'etc'), { recursive: true });
    await world.berth('assign', 'box', 'postgres');
    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /^ {2}restore password from the vault to \/etc\/postgres\/password$/m,
    );
    assert.doesNotMatch(preview.stdout, /mint password/);
    const run = await convergeBox(world);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^restored password from the vault to \/etc\/postgres\/password$/m);
    assert.equal(await readFile(join(world.root, 'etc/postgres/password'), 'utf8'), kept);
    assert.equal((await vaultValues(world))['box/postgres/password'], kept);
    assert.equal(
      await readFile(join(world.root, 'etc/postgres/pg.conf'), 'utf8'),
      `password=${kept}\n`,
    );
  });

  it('never repeats a secret that a failing hook printed', async () => {
    await world.writeModule('postgres', {
      ...POSTGRES,
      start: 'echo "cannot log in with $(cat "$BERTH_ROOT/etc/postgres/password")" >&2; exit 1',
    });
    await world.berth('assign', 'box', 'postgres');
    const run = await convergeBox(world);
    assert.equal(run.code, 1);
    const password = (await vaultValues(world))['box/postgres/password'] as string;
    assert.equal(
      run.stderr,
      'converge of box stopped at postgres: start of postgres failed (exit 1): cannot log in with [secret password of postgres]\n',
    );
    const journal = JSON.stringify(await world.journal());
    assert.ok(!journal.includes(password), 'the journal does not hold the secret');
  });

  it('is done with a start hook when its shell exits, though a daemon it left holds the output', async () => {
    await world.writeModule('postgres', {
      ...POSTGRES,
      start: 'sleep 30 & echo $! > "$BERTH_ROOT/daemon.pid"',
    });
    await world.berth('assign', 'box', 'postgres');
    const run = await convergeBox(world);
    const daemon = Number(await readFile(join(world.root, 'daemon.pid'), 'utf8'));
    try {
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /ran start of postgres\nbox is as assigned\n$/);
      // Done while the daemon still runs: it did not wait for the daemon's end.
      assert.doesNotThrow(() => process.kill(daemon, 0), 'the daemon is left running');
    } finally {
      process.kill(daemon, 'SIGTERM');
    }
  });

  it('releases an unassigned module: runs stop, keeps its data, secrets and files', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    await world.onBox('/var/lib/postgresql/base/1', 'rows');
    await world.berth('unassign', 'box', 'postgres');

    const preview = await world.berth('converge', 'box');
    assert.match(
      preview.stdout,
      /^converge box\nrelease postgres:\n {2}run stop: rm -f "\$BERTH_ROOT\/started-postgres"\n {2}stop managing it; its data, secrets and files stay on box\ndigest /,
    );
    const run = await actOnPreview(world, preview);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      'running stop of postgres …\nran stop of postgres\nreleased postgres: berth no longer manages it on box; its data, secrets and files stay\nbox is as assigned\n',
    );
    await assert.rejects(access(join(world.root, 'started-postgres')), 'stop ran');
    assert.equal(await readFile(join(world.root, 'var/lib/postgresql/base/1'), 'utf8'), 'rows');
    await access(join(world.root, 'etc/postgres/password'));
    await access(join(world.root, 'etc/postgres/pg.conf'));
    assert.deepEqual((await world.readState()).managed, {});
  });

  it('never removes a data path, even when a stop hook fails', async () => {
    await world.writeModule('postgres', { ...POSTGRES, stop: 'exit 9' });
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    await world.onBox('/var/lib/postgresql/base/1', 'rows');
    await world.berth('unassign', 'box', 'postgres');
    const run = await convergeBox(world);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'converge of box stopped at postgres: stop of postgres failed (exit 9)\n',
    );
    assert.equal(await readFile(join(world.root, 'var/lib/postgresql/base/1'), 'utf8'), 'rows');
    assert.ok(((await world.readState()).managed as Managed).box?.postgres, 'still managed');
  });
});
