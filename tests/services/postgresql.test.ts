/**
 * A real service: Debian 12's postgresql (the 15/main cluster), set up by hand (an app
 * role with a password kept in the postgres user's .pgpass, a database with rows), driven
 * through berth on this machine (a node whose root is `/`). There is no systemd here:
 * the module is examples/modules/postgresql.json as shipped, its hooks through
 * `pg_ctlcluster 15 main` (guarded by its status, so that a start or stop done already
 * is not an error); the admin starts and stops the cluster the same way. Needs root and
 * the package.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { chown, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { vaultValues } from '../commands/support.ts';
import { type KeptFiles, keepAsFound } from '../helpers/machine-files.ts';
import { needs } from '../helpers/needs.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { previewThenAct } from './support.ts';

const PGPASS = '/var/lib/postgresql/.pgpass';
const BERTH_CONF = '/etc/postgresql/15/main/conf.d/berth.conf';
const SETUP = '/etc/postgresql/15/main/berth-setup.sh';
const PASSWORD = 'Admin-made-app-password-0815';
const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const unavailable =
  process.getuid?.() !== 0
    ? 'needs root'
    : needs('pg_ctlcluster', 'postgresql') ||
      needs('psql', 'postgresql-client') ||
      (!existsSync('/var/lib/postgresql/15/main') &&
        "needs PostgreSQL 15's main cluster: apt-get install postgresql-15");

const EXAMPLE = JSON.parse(readFileSync(join(EXAMPLES, 'postgresql.json'), 'utf8'));
const { start: START, stop: STOP } = EXAMPLE as { start: string; stop: string };

function sh(script: string) {
  execFileSync('sh', ['-c', script], { stdio: 'ignore' });
}

/** psql as the postgres superuser, over the socket. */
function superuser(sql: string): string {
  return execFileSync('runuser', ['-u', 'postgres', '--', 'psql', '-XAtq', '-c', sql], {
    encoding: 'utf8',
  }).trim();
}

/** psql as the app role, over TCP with its password: the password is what the server holds. */
function asApp(sql: string, password = PASSWORD): string {
  return execFileSync('psql', ['-XAtq', '-h', '127.0.0.1', '-U', 'app', '-d', 'appdb', '-c', sql], {
    encoding: 'utf8',
    env: { ...process.env, PGPASSWORD: password },
  }).trim();
}

async function ready(): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    try {
      sh('runuser -u postgres -- pg_isready -q -h localhost -p 5432');
      return true;
    } catch {
      await new Promise((done) => setTimeout(done, 200));
    }
  }
  return false;
}

describe('postgresql, set up by hand, driven through berth', () => {
  let world: World;
  let pgUid = 0;
  let pgGid = 0;
  let machines: KeptFiles | undefined;

  before(async () => {
    if (unavailable) return;
    machines = keepAsFound(PGPASS, BERTH_CONF, SETUP);
    pgUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    pgGid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    sh(STOP);
    sh(START);
    assert.ok(await ready(), 'the admin started the cluster');
    // The admin: a role with a password, a database with rows, the password in .pgpass.
    superuser('DROP DATABASE IF EXISTS appdb');
    superuser('DROP ROLE IF EXISTS app');
    superuser(`CREATE ROLE app LOGIN PASSWORD '${PASSWORD}'`);
    superuser('CREATE DATABASE appdb OWNER app');
    asApp(
      "CREATE TABLE notes (id int, body text); INSERT INTO notes VALUES (1, 'one'), (2, 'two')",
    );
    await writeFile(PGPASS, `localhost:5432:*:app:${PASSWORD}\n`, { mode: 0o600 });
    await chown(PGPASS, pgUid, pgGid);

    world = await makeWorld();
    await world.writeSettings({ nodes: { host: { root: '/' } } });
    await world.writeModule('postgresql', EXAMPLE);
    cpSync(join(EXAMPLES, 'postgresql'), join(world.state, 'modules', 'postgresql'), {
      recursive: true,
    });
  });

  after(async () => {
    if (unavailable) return;
    try {
      if (await ready()) {
        superuser('DROP DATABASE IF EXISTS appdb');
        superuser('DROP ROLE IF EXISTS app');
      }
    } finally {
      sh(STOP);
      machines?.giveBack();
      await world?.cleanup();
    }
  });

  const act = (...args: string[]) => previewThenAct(world, ...args);

  it('take reads the app password out of .pgpass, mints none; converge adds its settings and reloads', {
    skip: unavailable,
  }, async () => {
    assert.equal((await world.berth('adopt', 'host')).code, 0);
    const take = await act('take', 'host', 'postgresql');
    assert.match(
      take.preview,
      /secret app_password: found on host inside \/var\/lib\/postgresql\/\.pgpass/,
    );
    assert.match(take.preview, /check: passes/);
    assert.match(take.preview, /file \/etc\/postgresql\/15\/main\/conf\.d\/berth\.conf: missing/);
    assert.doesNotMatch(take.preview + take.said, new RegExp(PASSWORD));
    assert.deepEqual(await vaultValues(world), { 'host/postgresql/app_password': PASSWORD });
    const converge = await act('converge', 'host');
    assert.match(
      converge.preview,
      /write \/etc\/postgresql\/15\/main\/conf\.d\/berth\.conf \(mode 0644\): it is missing/,
    );
    assert.doesNotMatch(converge.preview, /\.pgpass/, 'the hand-made .pgpass is what berth writes');
    assert.match(converge.said, /ran reload of postgresql/);
    const info = statSync(BERTH_CONF);
    assert.deepEqual([info.uid, info.gid], [pgUid, pgGid]);
    assert.equal(asApp('SELECT count(*) FROM notes'), '2');
  });

  it('a changed setting goes live through reload', { skip: unavailable }, async () => {
    const template = join(world.state, 'modules', 'postgresql', 'berth.conf');
    await writeFile(template, `${await readFile(template, 'utf8')}work_mem = '8MB'\n`);
    const { preview } = await act('converge', 'host');
    assert.match(preview, /\+work_mem = '8MB'/);
    assert.equal(superuser('SHOW work_mem'), '8MB');
  });

  it('the check fails when the cluster is stopped, and converge starts it again', {
    skip: unavailable,
  }, async () => {
    sh(STOP);
    const { preview } = await act('converge', 'host');
    assert.match(preview, /start postgresql: its check fails \(exit \d+/);
    assert.ok(await ready());
    assert.equal(asApp("SELECT string_agg(body, ',' ORDER BY id) FROM notes"), 'one,two');
  });

  it("release stops it; taken again and forgotten, the rows and the password are the admin's", {
    skip: unavailable,
  }, async () => {
    assert.equal((await world.berth('unassign', 'host', 'postgresql')).code, 0);
    const release = await act('converge', 'host');
    assert.match(release.said, /ran stop of postgresql/);
    assert.equal(await readFile(PGPASS, 'utf8'), `localhost:5432:*:app:${PASSWORD}\n`);
    sh(START);
    assert.ok(await ready());
    assert.equal((await world.berth('adopt', 'host')).code, 0);
    await act('take', 'host', 'postgresql');
    assert.equal((await world.berth('unassign', 'host', 'postgresql')).code, 0);
    assert.equal((await world.berth('forget', 'host', 'postgresql')).code, 0);
    assert.ok(await ready(), 'forget ran no stop');
    assert.equal(asApp("SELECT string_agg(body, ',' ORDER BY id) FROM notes"), 'one,two');
    assert.deepEqual(await vaultValues(world), { 'host/postgresql/app_password': PASSWORD });
    assert.equal(await readFile(PGPASS, 'utf8'), `localhost:5432:*:app:${PASSWORD}\n`);
  });
});
