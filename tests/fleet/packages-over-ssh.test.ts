/**
 * A module's packages installed over ssh, through the real binary, on the fleet's hosts:
 * each with a /usr of its own and apt pointed at a local repository of real Debian .debs
 * (tests/fleet/apt-repository.ts), nginx and redis-server purged from it first, so each
 * starts fresh. There is no systemd on a host: the example modules, as shipped, start and
 * stop through `service`, which runs the init scripts there. Skipped, saying why, where
 * the fleet cannot run or the .debs cannot be fetched.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, cp } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { needs } from '../helpers/needs.ts';
import { digestOf, makeWorld, type Run, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { berthIn, type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const BROKEN = 'berth-test-broken';
const GREETING = '/etc/berth-test/greet/greeting';

const unavailable = fleetUnavailable() || needs('curl', 'curl') || undefined;
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository(
      ['nginx', 'redis-server', 'hello'],
      [
        {
          name: BROKEN,
          version: '1.0',
          postinst: '#!/bin/sh\necho broken on purpose >&2\nexit 1\n',
        },
      ],
    );
const skip = typeof repository === 'string' ? false : repository.skip;

/** The version of a package the repository offers, from its index. */
function offered(name: string): string {
  const index = readFileSync(join(repository as string, 'Packages'), 'utf8');
  const entry = index.split('\n\n').find((each) => each.startsWith(`Package: ${name}\n`));
  const version = /\nVersion: (\S+)/.exec(entry ?? '')?.[1];
  if (!version) throw new Error(`the test repository has no ${name}`);
  return version;
}

const escaped = (text: string) => text.replace(/[.+*?^$()[\]{}|\\]/g, '\\$&');

describe("a module's packages, installed over ssh on fresh fleet hosts", { skip }, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const berth = (...args: string[]): Promise<Run> => berthIn(world.state, runtime, args);
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const installed = async (host: string, name: string) =>
    (
      await fleet
        .host(host)
        .exec(`dpkg-query -W -f='\${db:Status-Status} \${Version}' ${name} 2>/dev/null`)
    ).stdout;
  const preview = async (node: string) => {
    const said = await berth('converge', node);
    assert.equal(said.code, 0, said.stderr);
    return said;
  };
  const act = (node: string, said: Run, ...options: string[]) =>
    berth(...options, 'converge', node, '--yes', '--digest', digestOf(said.stdout));

  before(async () => {
    held = await packageFleet({ hosts: 3, repository: repository as string });
    ({ fleet, runtime } = held);
    // Fresh hosts: what this machine has installed of the packages, and left of them, is
    // not theirs; nor the redis account, which redis-server's package makes (its purge
    // leaves it) and the example names as the owner of its files.
    await Promise.all(
      fleet.hosts.map(({ name }) =>
        on(
          name,
          [
            'export DEBIAN_FRONTEND=noninteractive',
            'apt-get purge -y -q nginx nginx-common redis-server redis-tools hello >/dev/null 2>&1',
            'apt-get autoremove --purge -y -q >/dev/null',
            'rm -rf /var/www/html /etc/nginx /etc/redis /var/lib/redis /var/log/redis',
            'userdel redis 2>/dev/null; groupdel redis 2>/dev/null; true',
          ].join('; '),
        ),
      ),
    );
    world = await makeWorld();
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: {
        alpha: { ssh: 'alpha' },
        bravo: { ssh: 'bravo', sudo: true },
        charlie: { ssh: 'charlie' },
      },
      sshConfig: 'ssh_config',
    });
    for (const name of ['nginx', 'redis-server']) {
      await copyFile(join(EXAMPLES, `${name}.json`), join(world.state, 'modules', `${name}.json`));
      await cp(join(EXAMPLES, name), join(world.state, 'modules', name), { recursive: true });
    }
    await world.writeModule('greet', {
      packages: ['hello'],
      files: { [GREETING]: { content: 'hi\n' } },
    });
  });
  after(async () => {
    await world?.cleanup();
    await held?.stop();
  });

  it('brings a fresh host to nginx and redis-server in one converge, both answering', async () => {
    assert.equal((await installed('alpha', 'nginx')).startsWith('installed'), false);
    for (const module of ['nginx', 'redis-server'])
      assert.equal((await berth('assign', 'alpha', module)).code, 0);
    assert.equal(await on('alpha', 'getent passwd redis || true'), '');
    const said = await preview('alpha');
    assert.match(
      said.stdout,
      /\n {4}owner redis: made by its packages, looked up after they are installed\n/,
    );
    assert.match(
      said.stdout,
      new RegExp(
        `\n {2}install package nginx ${escaped(offered('nginx'))} \\(with \\d+ it depends on: [^\n]*nginx-common ${escaped(offered('nginx-common'))}`,
      ),
    );
    assert.match(
      said.stdout,
      new RegExp(`\n {2}install package redis-server ${escaped(offered('redis-server'))}`),
    );
    const done = await act('alpha', said, '--lock-timeout', '1m');
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /\nalpha is as assigned\n$/);
    assert.equal(await installed('alpha', 'nginx'), `installed ${offered('nginx')}`);
    const page = execFileSync(
      'curl',
      ['-fsS', '-o', '/dev/null', '-w', '%{http_code}', `http://${fleet.host('alpha').address}/`],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(page, '200');
    const pong = await on(
      'alpha',
      `REDISCLI_AUTH="$(sed -n 's/^requirepass[[:space:]]*//p' /etc/redis/redis.conf)" redis-cli ping`,
    );
    assert.equal(pong, 'PONG\n');
    assert.match((await preview('alpha')).stdout, /alpha is as assigned: nothing to do/);
  });

  it('a pinned version the lists do not offer is a blocker naming what they do', async () => {
    await world.writeModule('pinned', {
      packages: [{ name: 'redis-server', version: '5:7.0.11-1~deb12u1' }],
    });
    assert.equal((await berth('assign', 'charlie', 'pinned')).code, 0);
    const said = await preview('charlie');
    assert.match(
      said.stdout,
      new RegExp(
        `blocked: redis-server 5:7\\.0\\.11-1~deb12u1 is not in charlie's package lists \\(they offer ${escaped(offered('redis-server'))}\\); refresh them with berth converge charlie --refresh`,
      ),
    );
    const refused = await act('charlie', said);
    assert.equal(refused.code, 1);
    assert.equal(await installed('charlie', 'redis-server'), '');
    assert.equal((await berth('unassign', 'charlie', 'pinned')).code, 0);
  });

  it('a package installed by hand between preview and act refuses the act, naming it', async () => {
    assert.equal((await berth('assign', 'charlie', 'greet')).code, 0);
    const said = await preview('charlie');
    assert.match(
      said.stdout,
      new RegExp(`\n {2}install package hello ${escaped(offered('hello'))}\n`),
    );
    await on('charlie', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q hello >/dev/null');
    const refused = await act('charlie', said);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(`package hello is now installed on charlie at ${escaped(offered('hello'))}`),
    );
    assert.equal((await fleet.host('charlie').exec(`test -e ${GREETING}`)).code, 1);
    await on('charlie', 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -q hello >/dev/null');
  });

  it("apt's lock held on the host is waited on, then refused naming its holder", async () => {
    const said = await preview('charlie');
    const pid = (
      await on(
        'charlie',
        `perl -e 'use Fcntl; open(my $fh, "+<", "/var/lib/dpkg/lock-frontend") or die; fcntl($fh, F_SETLKW, pack("s s x4 q q i x4", F_WRLCK, SEEK_SET, 0, 0, 0)) or die; sleep 600' </dev/null >/dev/null 2>&1 & echo $!`,
      )
    ).trim();
    try {
      const refused = await act('charlie', said, '--lock-timeout', '1s');
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        new RegExp(
          `converge of charlie stopped at greet: apt on charlie is busy \\(held by perl, pid ${pid}\\); berth waited 1s for it to install hello`,
        ),
      );
    } finally {
      await on('charlie', `kill ${pid}`);
    }
    assert.equal(await installed('charlie', 'hello'), '');
    assert.equal((await fleet.host('charlie').exec(`test -e ${GREETING}`)).code, 1);
  });

  it('a package whose install fails leaves nothing of the module written', async () => {
    await world.writeModule('broken', {
      packages: [BROKEN],
      files: { '/etc/berth-test/broken/conf': { content: 'never\n' } },
    });
    assert.equal((await berth('unassign', 'charlie', 'greet')).code, 0);
    assert.equal((await berth('assign', 'charlie', 'broken')).code, 0);
    const said = await preview('charlie');
    assert.match(said.stdout, new RegExp(`\n {2}install package ${BROKEN} 1\\.0\n`));
    const failed = await act('charlie', said, '--lock-timeout', '1m');
    assert.equal(failed.code, 1);
    assert.match(
      failed.stderr,
      new RegExp(
        `^converge of charlie stopped at broken: installing ${BROKEN} on charlie failed: E: `,
      ),
    );
    assert.equal((await fleet.host('charlie').exec('test -e /etc/berth-test/broken')).code, 1);
    // Managed before its first change: the next converge carries it on.
    const state = await world.readState();
    assert.deepEqual(Object.keys(state.managed?.charlie ?? {}), ['broken']);
    await on('charlie', `dpkg --purge --force-all ${BROKEN} >/dev/null 2>&1`);
    assert.equal((await berth('unassign', 'charlie', 'broken')).code, 0);
  });

  it('installs through sudo on the sudo host', async () => {
    assert.equal((await berth('assign', 'bravo', 'greet')).code, 0);
    const said = await preview('bravo');
    const done = await act('bravo', said, '--lock-timeout', '1m');
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await installed('bravo', 'hello'), `installed ${offered('hello')}`);
    assert.equal(await on('bravo', 'hello'), 'Hello, world!\n');
    assert.equal(await on('bravo', `cat ${GREETING}`), 'hi\n');
  });

  it('a release leaves the package installed', async () => {
    assert.equal((await berth('unassign', 'alpha', 'redis-server')).code, 0);
    const said = await preview('alpha');
    assert.match(
      said.stdout,
      /its data, secrets, files and packages \(redis-server\) stay on alpha/,
    );
    const done = await act('alpha', said);
    assert.equal(done.code, 0, done.stderr);
    assert.equal(await installed('alpha', 'redis-server'), `installed ${offered('redis-server')}`);
    const status = await berth('status', 'alpha');
    assert.match(
      status.stdout,
      /packages berth installed that nothing it runs needs: [^\n]*redis-server/,
    );
  });
});
