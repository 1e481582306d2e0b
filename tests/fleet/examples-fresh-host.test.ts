/**
 * The examples Debian ships the software of (nginx, redis-server, postgresql), each from
 * nothing to serving in one converge over ssh, through the real binary, on fresh fleet
 * hosts with a /usr of their own and apt pointed at a local repository of real Debian
 * .debs (tests/fleet/apt-repository.ts). The README's fresh-host flow, as written (assign,
 * preview, `converge --yes` at a terminal), on a host whose package lists are empty and
 * which lacks curl, which the nginx example's check runs: its refresh_after has the lists
 * refreshed as the act's first step. There is no systemd on a host: the examples' hooks,
 * as shipped, start, stop and reload through `service` and `pg_ctlcluster`, which run the
 * init scripts there. Skipped, saying why, where the fleet cannot run or the .debs cannot
 * be fetched.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, cp } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { needs } from '../helpers/needs.ts';
import { berthAtTerminal } from '../helpers/terminal.ts';
import { digestOf, makeWorld, type Run, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { berthIn, type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');

const SHIPPED = ['nginx', 'redis-server', 'postgresql'];

const unavailable =
  fleetUnavailable() || needs('curl', 'curl') || needs('script', 'bsdutils') || undefined;
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository(['nginx', 'curl', 'redis-server', 'postgresql']);
const skip = typeof repository === 'string' ? false : repository.skip;

describe('the examples, each from nothing to serving in one converge on a fresh host', {
  skip,
  timeout: 600_000,
}, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const berth = (...args: string[]): Promise<Run> => berthIn(world.state, runtime, args);
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const installed = async (host: string, name: string) =>
    (await fleet.host(host).exec(`dpkg-query -W -f='\${db:Status-Status}' ${name} 2>/dev/null`))
      .stdout;

  before(async () => {
    held = await packageFleet({ hosts: 2, repository: repository as string });
    ({ fleet, runtime } = held);
    // berthAtTerminal runs berth with this process's environment.
    process.env.XDG_RUNTIME_DIR = runtime;
    delete process.env.SSH_AUTH_SOCK;
    // Fresh hosts: what this machine has installed of the software, and left of it, is not
    // theirs; nor the accounts the packages make (a purge leaves them).
    const fresh = [
      'export DEBIAN_FRONTEND=noninteractive',
      'apt-get purge -y -q nginx nginx-common redis-server redis-tools curl postgresql postgresql-15 postgresql-common postgresql-client-common >/dev/null 2>&1',
      'apt-get autoremove --purge -y -q >/dev/null',
      'rm -rf /var/www/html /etc/nginx /etc/redis /var/lib/redis /var/log/redis /etc/postgresql /var/lib/postgresql /var/log/postgresql',
      'userdel redis 2>/dev/null; groupdel redis 2>/dev/null; userdel postgres 2>/dev/null; groupdel postgres 2>/dev/null; true',
    ].join('; ');
    await Promise.all(fleet.hosts.map(({ name }) => on(name, fresh)));
    // Their package lists are empty, as a fresh host's are before its first update.
    for (const host of ['alpha', 'bravo']) await on(host, 'rm -rf /var/lib/apt/lists/*');
    await on('alpha', 'test ! -e /usr/bin/curl');
    world = await makeWorld();
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      groups: { web: ['alpha', 'bravo'] },
      sshConfig: 'ssh_config',
    });
    // The examples as shipped, copied as the README copies them: their hooks and templates.
    for (const name of SHIPPED) {
      await copyFile(join(EXAMPLES, `${name}.json`), join(world.state, 'modules', `${name}.json`));
      await cp(join(EXAMPLES, name), join(world.state, 'modules', name), { recursive: true });
    }
  });
  after(async () => {
    await world?.cleanup();
    await held?.stop();
  });

  it("the README's flow on a host whose lists are empty: nginx and redis serving after one converge at a terminal", async () => {
    for (const module of ['nginx', 'redis-server'])
      assert.equal((await berth('assign', 'alpha', module)).code, 0);
    const preview = await berth('converge', 'alpha');
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /blocked/, preview.stdout);
    assert.match(
      preview.stdout,
      /^install nginx:\n {2}record that berth manages it, not yet started\n {2}refresh alpha's package lists first \(apt-get update\): they were never fetched, and nginx's refresh_after is 1d\n {2}install package nginx at the version its refreshed lists offer\n {2}install package curl at the version its refreshed lists offer\n/m,
    );
    assert.match(
      preview.stdout,
      /\n {2}install package redis-server at the version its refreshed lists offer\n {4}owner redis: made by its packages, looked up after they are installed\n/,
    );
    // The recap says what each node's preview says: a fresh install.
    const recap = await berth('converge', '@web');
    assert.match(recap.stdout, /\n {2}alpha: install nginx, install redis-server \(\d+ steps\)\n/);

    const terminal = berthAtTerminal(world.state, [
      '--lock-timeout',
      '1m',
      'converge',
      'alpha',
      '--yes',
    ]);
    await terminal.shown('yes');
    terminal.type('yes\n');
    const { code, shown } = await terminal.ended;
    assert.equal(code, 0, shown);
    assert.match(shown, /\nrefreshed alpha's package lists \(apt-get update\)\n/);
    // What the refreshed lists offered, exactly; what nginx and curl depend on, of both.
    assert.match(
      shown,
      /\ninstalled package nginx \S+\ninstalled package curl \S+ \(with \d+ nginx and curl depend on: [^\n]*nginx-common /,
    );
    assert.match(shown, /\nalpha is as assigned\n/);
    assert.equal(await installed('alpha', 'curl'), 'installed');
    const page = execFileSync(
      'curl',
      ['-fsS', '-o', '/dev/null', '-w', '%{http_code}', `http://${fleet.host('alpha').address}/`],
      { encoding: 'utf8' },
    );
    assert.equal(page, '200');
    const pong = await on(
      'alpha',
      `REDISCLI_AUTH="$(sed -n 's/^requirepass[[:space:]]*//p' /etc/redis/redis.conf)" redis-cli ping`,
    );
    assert.equal(pong, 'PONG\n');
    // Every check (the nginx example's with the curl it installed) passes: nothing to do.
    assert.match((await berth('converge', 'alpha')).stdout, /alpha is as assigned: nothing to do/);
  });

  it('postgresql from nothing (its lists empty too) to answering in one converge, through sudo', async () => {
    assert.equal((await berth('assign', 'bravo', 'postgresql')).code, 0);
    const preview = await berth('converge', 'bravo');
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /blocked/, preview.stdout);
    assert.match(
      preview.stdout,
      /\n {2}refresh bravo's package lists first \(apt-get update\): they were never fetched, and postgresql's refresh_after is 1d\n {2}install package postgresql at the version its refreshed lists offer\n/,
    );
    const done = await berth(
      '--lock-timeout',
      '1m',
      'converge',
      'bravo',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.match(
      done.stdout,
      /\ninstalled package postgresql \S+ \(with \d+ it depends on: [^\n]*postgresql-15 /,
    );
    assert.match(
      done.stdout,
      /\nran setup of postgresql\n(?:.*\n)*ran start of postgresql\nbravo is as assigned\n$/,
    );
    const password = (await on('bravo', 'cut -d: -f5 /var/lib/postgresql/.pgpass')).trim();
    assert.match(password, /^\S{20,}$/);
    assert.equal(await on('bravo', 'runuser -u postgres -- psql -Atc "select 1"'), '1\n');
    // The role app logs in over TCP with the password berth keeps in .pgpass, and only with it.
    assert.equal(
      await on(
        'bravo',
        'runuser -u postgres -- psql -h localhost -U app -d postgres -Atc "select current_user"',
      ),
      'app\n',
    );
    const wrong = await fleet
      .host('bravo')
      .exec(
        'PGPASSWORD=not-it runuser -u postgres -- psql -w -h localhost -U app -d postgres -Atc "select 1" </dev/null; echo "exit $?"',
      );
    assert.match(wrong.stdout, /exit [12]\n$/, wrong.stderr);
    assert.match((await berth('converge', 'bravo')).stdout, /bravo is as assigned: nothing to do/);
  });

  it("a changed value goes live through the example's reload; release stops each, its daemon gone and its data kept", async () => {
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      groups: { web: ['alpha', 'bravo'] },
      sshConfig: 'ssh_config',
      values: { alpha: { maxmemory: '64mb' } },
    });
    const changed = await berth('converge', 'alpha');
    const applied = await berth('converge', 'alpha', '--yes', '--digest', digestOf(changed.stdout));
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.match(applied.stdout, /\nran reload of redis-server\n/);
    const auth = `REDISCLI_AUTH="$(sed -n 's/^requirepass[[:space:]]*//p' /etc/redis/redis.conf)"`;
    assert.equal(
      await on('alpha', `${auth} redis-cli config get maxmemory`),
      'maxmemory\n67108864\n',
    );

    for (const [node, module] of [
      ['alpha', 'nginx'],
      ['alpha', 'redis-server'],
      ['bravo', 'postgresql'],
    ] as const)
      assert.equal((await berth('unassign', node, module)).code, 0);
    for (const node of ['alpha', 'bravo']) {
      const preview = await berth('converge', node);
      const done = await berth('converge', node, '--yes', '--digest', digestOf(preview.stdout));
      assert.equal(done.code, 0, done.stdout + done.stderr);
    }
    // Each stop returns once its daemon is gone: no process of it is left at that moment.
    const running = async (host: string) =>
      (await fleet.host(host).exec('cat /proc/[0-9]*/comm 2>/dev/null')).stdout.split('\n');
    const left = [...(await running('alpha')), ...(await running('bravo'))];
    for (const daemon of ['nginx', 'redis-server', 'postgres'])
      assert.ok(!left.includes(daemon), `${daemon} still runs after its stop`);
    await on('alpha', 'test -d /var/lib/redis && test -d /var/www/html');
    await on('bravo', 'test -s /var/lib/postgresql/15/main/PG_VERSION');
  });
});
