import assert from 'node:assert/strict';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { needs } from '../helpers/needs.ts';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { snapshot, stateFiles } from './support.ts';

describe('berth adopt', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('says what the machine holds, module by module, and when the account was taken', async () => {
    await world.onBox('/var/lib/gitea/repositories/a.git', 'objects');
    await world.onBox('/etc/gitea/db_password', 'hunter2\n');
    await world.onBox('/etc/gitea/app.ini', '[database]\nPASSWD = hunter2\n');
    await chmod(join(world.root, 'etc/gitea/app.ini'), 0o640);
    await mkdir(join(world.root, 'var/lib/postgresql'), { recursive: true });

    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^account of box, taken \d{4}-\d\d-\d\dT[\d:.]+Z$/);
    assert.deepEqual(lines.slice(1, 3), ['gitea:', '  data /var/lib/gitea: found']);
    assert.match(
      lines[3] ?? '',
      /^ {2}secret db_password at \/etc\/gitea\/db_password: found, fingerprint [0-9a-f]{12}$/,
    );
    assert.equal(lines[4], '  secret admin_token at /etc/gitea/admin_token: not found');
    assert.match(
      lines[5] ?? '',
      /^ {2}file \/etc\/gitea\/app\.ini: found, mode 0640, fingerprint [0-9a-f]{12}$/,
    );
    assert.deepEqual(lines.slice(6), ['postgres: holds nothing']);
    assert.doesNotMatch(run.stdout, /hunter2/);

    const account = (await world.readState()).accounts as Record<string, unknown>;
    const box = account.box as { takenAt: string; modules: Record<string, unknown> };
    assert.equal(`account of box, taken ${box.takenAt}`, lines[0]);
    assert.deepEqual(Object.keys(box.modules).sort(), ['gitea', 'postgres']);
  });

  it('counts an empty data directory as not found', async () => {
    await mkdir(join(world.root, 'var/lib/gitea'), { recursive: true });
    await world.onBox('/etc/gitea/admin_token', '');
    const run = await world.berth('adopt', 'box');
    assert.match(run.stdout, /\ngitea: holds nothing\n/);
  });

  it('says an empty data directory is empty, not that it is not there', async () => {
    await mkdir(join(world.root, 'var/lib/gitea'), { recursive: true });
    await world.onBox('/etc/gitea/db_password', 'hunter2\n');
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.stdout.split('\n').slice(1, 3), [
      'gitea:',
      '  data /var/lib/gitea: empty',
    ]);
    const take = await world.berth('take', 'box', 'gitea');
    assert.match(take.stdout, /\ndata \/var\/lib\/gitea: empty\n/);
    await rm(join(world.root, 'var/lib/gitea'), { recursive: true });
    const gone = await world.berth('adopt', 'box');
    assert.deepEqual(gone.stdout.split('\n').slice(1, 3), [
      'gitea:',
      '  data /var/lib/gitea: not found',
    ]);
  });

  it('keeps secret values out of what it says, the state and the journal', async () => {
    await world.onBox('/etc/postgres/password', 's3cret-value\n');
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 0);
    assert.doesNotMatch(run.stdout + run.stderr, /s3cret-value/);
    for (const [name, text] of Object.entries(await stateFiles(world))) {
      assert.doesNotMatch(text, /s3cret-value/, name);
      assert.doesNotMatch(text, /czNjcmV0LXZhbHVl/, `${name}, as base64`);
    }
  });

  it('changes nothing on the machine', async () => {
    await world.onBox('/var/lib/gitea/repositories/a.git', 'objects');
    await world.onBox('/etc/gitea/db_password', 'hunter2\n');
    await world.onBox('/etc/postgres/pg.conf', 'password=x\n');
    await mkdir(join(world.root, 'var/lib/postgresql'), { recursive: true });
    const before = await snapshot(world.root);
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    assert.deepEqual(await snapshot(world.root), before);
  });

  it('says so when the catalog holds no modules', async () => {
    await rm(join(world.state, 'modules'), { recursive: true });
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^account of box, taken \S+\nthe catalog holds no modules; there was nothing to look for on box\n$/,
    );
  });

  it('records a module it could not survey, with why, and surveys the rest', async () => {
    await world.writeModule('bad', { data: ['relative/path'] });
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\nbad: not surveyed: \S+bad\.json is not valid: data\.0: /);
    assert.match(run.stdout, /\ngitea: holds nothing\n/);
  });

  it('refuses a machine it cannot reach, and records no account', async () => {
    await rm(world.root, { recursive: true });
    const run = await world.berth('adopt', 'box');
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr: `box cannot be reached: its root ${world.root} does not exist\n`,
    });
    const state = await world.readState().catch(() => ({ accounts: {} }));
    assert.deepEqual(state.accounts, {});
  });

  it("refuses a node over ssh that cannot be reached, with ssh's own words", {
    skip: needs('ssh', 'openssh-client'),
  }, async () => {
    await world.writeSettings({
      nodes: { box: { root: world.root }, web1: { ssh: 'admin@127.0.0.1', port: 1 } },
    });
    const run = await world.berth('adopt', 'web1');
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^web1 cannot be reached: ssh: connect to host 127\.0\.0\.1 port 1: Connection refused/,
    );
  });

  it('replaces the account when adopted again', async () => {
    await world.berth('adopt', 'box');
    await world.onBox('/var/lib/postgresql/base', 'rows');
    const run = await world.berth('adopt', 'box');
    assert.match(run.stdout, /\npostgres:\n {2}data \/var\/lib\/postgresql: found\n/);
  });
});
