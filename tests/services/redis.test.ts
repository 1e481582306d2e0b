/**
 * A real service: Debian 12's redis-server, set up by hand as an admin would (a password
 * in redis.conf, keys in its data), then driven through berth on this machine (a node
 * whose root is `/`): adopt, take, converge, a changed setting going live, the owner
 * kept, a check that fails when the daemon is down, release, forget. There is no
 * systemd here: the module is examples/modules/redis-server.json, its hooks as shipped
 * (`service`, which runs the init script); the admin starts and stops redis the same way.
 *
 * Needs root and the redis-server package (.ci/run installs it); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { vaultValues } from '../commands/support.ts';
import { keepAsFound } from '../helpers/machine-files.ts';
import { needs } from '../helpers/needs.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { previewThenAct } from './support.ts';

const CONF = '/etc/redis/redis.conf';
/** Where redis saves its keys: the suite's keys, not the machine's, are saved there meanwhile. */
const DUMP = '/var/lib/redis/dump.rdb';
const PASSWORD = 'Admin-made-redis-password-4711';
const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const unavailable =
  process.getuid?.() !== 0
    ? 'needs root'
    : needs('redis-server', 'redis-server') ||
      needs('redis-cli', 'redis-tools') ||
      (!existsSync(CONF) && `needs ${CONF}: apt-get install redis-server`);

const EXAMPLE = JSON.parse(readFileSync(join(EXAMPLES, 'redis-server.json'), 'utf8'));
const { start: START, stop: STOP } = EXAMPLE as { start: string; stop: string };

function redis(...args: string[]): string {
  return execFileSync('redis-cli', ['--no-auth-warning', '-a', PASSWORD, ...args], {
    encoding: 'utf8',
  }).trim();
}

function sh(script: string) {
  execFileSync('sh', ['-c', script], { stdio: 'ignore' });
}

/** Waits until the daemon answers (or the time is up). */
async function answering(): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    try {
      if (redis('ping') === 'PONG') return true;
    } catch {
      // Not yet.
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return false;
}

/**
 * The admin's redis: a password inside redis.conf (owner and mode as the package made
 * them), the daemon started, keys written and saved; and a world whose redis-server module
 * is the example's, its `redis.conf` as `file` says. The machine's files are given back by
 * `giveBack`, the daemon stopped.
 */
async function adminsRedis(
  file: (example: Record<string, unknown>) => Record<string, unknown> = (example) => example,
): Promise<{ world: World; giveBack(): Promise<void> }> {
  const machines = keepAsFound(CONF, DUMP);
  const original = readFileSync(CONF);
  sh(STOP);
  await writeFile(CONF, `${original.toString('utf8')}\nrequirepass ${PASSWORD}\n`);
  await chown(CONF, uid('redis'), gid('redis'));
  await chmod(CONF, 0o640);
  sh(START);
  assert.ok(await answering(), 'the admin started redis');
  redis('FLUSHALL');
  redis('SET', 'greeting', 'hello from the admin');
  redis('RPUSH', 'rows', 'one', 'two', 'three');
  redis('SAVE');

  const world = await makeWorld();
  await world.writeSettings({ nodes: { host: { root: '/' } } });
  await world.writeModule('redis-server', file(EXAMPLE));
  await mkdir(join(world.state, 'modules', 'redis-server'), { recursive: true });
  copyFileSync(
    join(EXAMPLES, 'redis-server', 'redis.conf'),
    join(world.state, 'modules', 'redis-server', 'redis.conf'),
  );
  return {
    world,
    async giveBack() {
      try {
        sh(STOP);
      } finally {
        machines.giveBack();
        await world.cleanup();
      }
    },
  };
}

describe('redis-server, set up by hand, driven through berth', () => {
  let world: World;
  let admins: Awaited<ReturnType<typeof adminsRedis>> | undefined;

  before(async () => {
    if (unavailable) return;
    admins = await adminsRedis();
    world = admins.world;
  });

  after(() => admins?.giveBack());

  const act = (...args: string[]) => previewThenAct(world, ...args);

  it('adopt and take: the password read out of redis.conf, none minted', {
    skip: unavailable,
  }, async () => {
    const adopt = await world.berth('adopt', 'host');
    assert.equal(adopt.code, 0, adopt.stderr);
    const take = await act('take', 'host', 'redis-server');
    assert.match(take.preview, /secret password: found on host inside \/etc\/redis\/redis\.conf/);
    assert.match(take.preview, /check: passes, so redis-server is taken as running/);
    assert.match(take.preview, /file \/etc\/redis\/redis\.conf: differs from what berth writes/);
    // The package's redis.conf is long and mostly comments: the diff counts them, shows the
    // setting that changes first, and folds each run of comments to a line.
    assert.match(take.preview, /\n {4}\(\+\d+ −\d+ lines: \d+ of them comments or blank\)\n/);
    assert.match(take.preview, /\n {4}@@ [^\n]+ @@\n {4}\+requirepass \[secret password\]\n/);
    assert.match(take.preview, /\n {4}@@ [^\n]+ @@ only comments or blank lines: \+\d+ −\d+\n/);
    assert.doesNotMatch(take.preview + take.said, new RegExp(PASSWORD));
    assert.doesNotMatch(take.said, /minted/);
    assert.deepEqual(await vaultValues(world), { 'host/redis-server/password': PASSWORD });
    const status = await world.berth('status', 'host', '--check');
    assert.match(status.stdout, /check redis-server: passes/);
  });

  it("converge writes berth's redis.conf, keeping the password and the owner; the restart keeps the data", {
    skip: unavailable,
  }, async () => {
    const { preview } = await act('converge', 'host');
    assert.match(preview, /write \/etc\/redis\/redis\.conf \(mode 0640\): it differs/);
    assert.match(preview, /run reload: /);
    const conf = await readFile(CONF, 'utf8');
    assert.match(conf, new RegExp(`^requirepass ${PASSWORD}$`, 'm'));
    const info = statSync(CONF);
    assert.deepEqual([info.uid, info.gid, info.mode & 0o777], [uid('redis'), gid('redis'), 0o640]);
    assert.ok(await answering(), 'redis runs again, as redis, reading its config');
    assert.equal(redis('GET', 'greeting'), 'hello from the admin');
  });

  it('a changed setting goes live through reload', { skip: unavailable }, async () => {
    const template = join(world.state, 'modules', 'redis-server', 'redis.conf');
    const text = await readFile(template, 'utf8');
    await writeFile(template, text.replace(/^timeout 0$/m, 'timeout 300'));
    const { preview } = await act('converge', 'host');
    assert.match(preview, /-timeout 0\n {4}\+timeout 300/);
    assert.ok(await answering());
    assert.deepEqual(redis('CONFIG', 'GET', 'timeout').split('\n'), ['timeout', '300']);
  });

  it('the check fails when the daemon is stopped, and converge starts it again', {
    skip: unavailable,
  }, async () => {
    sh(STOP);
    const { preview } = await act('converge', 'host');
    assert.match(preview, /start redis-server: its check fails \(exit 1/);
    assert.ok(await answering());
    assert.equal(redis('LRANGE', 'rows', '0', '-1'), 'one\ntwo\nthree');
  });

  it('unassign and release run stop, keeping data and the password', {
    skip: unavailable,
  }, async () => {
    assert.equal((await world.berth('unassign', 'host', 'redis-server')).code, 0);
    const { said } = await act('converge', 'host');
    assert.match(said, /ran stop of redis-server/);
    assert.throws(() => redis('ping'), 'stop stopped the daemon');
    assert.match(await readFile(CONF, 'utf8'), new RegExp(`^requirepass ${PASSWORD}$`, 'm'));
    assert.ok(existsSync('/var/lib/redis/dump.rdb'));
  });

  it("taken again and forgotten: stop is not run, and the data and password are the admin's", {
    skip: unavailable,
  }, async () => {
    assert.equal((await world.berth('adopt', 'host')).code, 0);
    const take = await act('take', 'host', 'redis-server');
    assert.match(take.preview, /check: fails \(exit 1/);
    await act('converge', 'host');
    assert.ok(await answering());
    assert.equal((await world.berth('unassign', 'host', 'redis-server')).code, 0);
    const forget = await world.berth('forget', 'host', 'redis-server');
    assert.equal(forget.code, 0, forget.stderr);
    assert.equal(redis('ping'), 'PONG', 'forget ran no stop');
    assert.equal(redis('GET', 'greeting'), 'hello from the admin');
    assert.equal(redis('LRANGE', 'rows', '0', '-1'), 'one\ntwo\nthree');
    assert.deepEqual(await vaultValues(world), { 'host/redis-server/password': PASSWORD });
    assert.match(await readFile(CONF, 'utf8'), new RegExp(`^requirepass ${PASSWORD}$`, 'm'));
  });
});

describe('a hand-made redis taken under a definition that names no owner for redis.conf', () => {
  let world: World;
  let admins: Awaited<ReturnType<typeof adminsRedis>> | undefined;
  /** The owner, group and mode of redis.conf now. */
  const owned = () => {
    const info = statSync(CONF);
    return [info.uid, info.gid, info.mode & 0o777];
  };
  const asTheAdminMadeIt = () => [uid('redis'), gid('redis'), 0o640];
  /** redis answers with its password, and the admin's keys are there. */
  const answersWithItsKeys = async () => {
    assert.ok(await answering(), 'redis runs, as redis, reading its config');
    assert.equal(redis('GET', 'greeting'), 'hello from the admin');
    assert.equal(redis('LRANGE', 'rows', '0', '-1'), 'one\ntwo\nthree');
  };

  before(async () => {
    if (unavailable) return;
    // As an operator writes one: redis.conf's owner, group and mode left as they are.
    admins = await adminsRedis((example) => {
      const files = example.files as Record<string, Record<string, unknown>>;
      const { owner: _, group: __, mode: ___, ...conf } = files[CONF] ?? {};
      return { ...example, files: { [CONF]: conf } };
    });
    world = admins.world;
    assert.equal((await world.berth('adopt', 'host')).code, 0);
    await previewThenAct(world, 'take', 'host', 'redis-server');
  });

  after(() => admins?.giveBack());

  it('converge with nothing changed keeps redis.conf redis:redis 0640, and redis answers', {
    skip: unavailable,
  }, async () => {
    const { preview } = await previewThenAct(world, 'converge', 'host');
    assert.match(preview, /write \/etc\/redis\/redis\.conf \(mode 0640\): it differs/);
    assert.doesNotMatch(preview, /owner 0:0/);
    assert.deepEqual(owned(), asTheAdminMadeIt());
    await answersWithItsKeys();
    const again = await world.berth('converge', 'host');
    assert.match(again.stdout, /host is as assigned: nothing to do/);
  });

  it('a setting changed goes live through reload, redis.conf still the admin made it', {
    skip: unavailable,
  }, async () => {
    const template = join(world.state, 'modules', 'redis-server', 'redis.conf');
    const text = await readFile(template, 'utf8');
    await writeFile(template, text.replace(/^timeout 0$/m, 'timeout 300'));
    const { preview } = await previewThenAct(world, 'converge', 'host');
    assert.match(preview, /-timeout 0\n {4}\+timeout 300/);
    assert.deepEqual(owned(), asTheAdminMadeIt());
    await answersWithItsKeys();
    assert.deepEqual(redis('CONFIG', 'GET', 'timeout').split('\n'), ['timeout', '300']);
    assert.deepEqual(await vaultValues(world), { 'host/redis-server/password': PASSWORD });
  });
});

function uid(name: string): number {
  return Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
}

function gid(name: string): number {
  return Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
}
