/**
 * The example git forge (examples/modules/git-forge: gitolite3, cgit, nginx, fcgiwrap from
 * Debian's packages) through the real binary on fresh fleet hosts with a /usr of their own,
 * apt pointed at a local repository of real Debian .debs (tests/fleet/apt-repository.ts),
 * no systemd running: one converge from nothing, a push over ssh as the admin's key, cgit
 * listing it over http, a take of a forge set up by hand, a release that keeps the
 * repositories. Skipped, saying why, where the fleet cannot run or the .debs cannot be
 * fetched.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { needs } from '../helpers/needs.ts';
import { digestOf, makeWorld, type Run, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { berthIn, FLEET_DOMAIN, type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

const run = promisify(execFile);
const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const DEFINITION = JSON.parse(readFileSync(join(EXAMPLES, 'git-forge.json'), 'utf8')) as {
  packages: string[];
  files: Record<string, { source?: string; content?: string; mode: string }>;
};
const HOME = '/var/lib/gitolite3';

const unavailable =
  fleetUnavailable() ||
  needs('curl', 'curl') ||
  needs('git', 'git') ||
  needs('ssh-keygen', 'openssh-client') ||
  undefined;
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository(DEFINITION.packages);
const skip = typeof repository === 'string' ? false : repository.skip;

describe('the example git forge on fresh fleet hosts', { skip }, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  let keys: string;
  const key = (name: string) => join(keys, name);
  const publicKey = (name: string) => readFileSync(`${key(name)}.pub`, 'utf8').trim();
  const berth = (...args: string[]): Promise<Run> => berthIn(world.state, runtime, args);
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const preview = async (...args: string[]) => {
    const said = await berth(...args);
    assert.equal(said.code, 0, said.stderr);
    return said;
  };
  const act = async (said: Run, ...args: string[]) => {
    const done = await berth(...args, '--yes', '--digest', digestOf(said.stdout));
    assert.equal(done.code, 0, `${done.stdout}\n${done.stderr}`);
    return done;
  };
  const fqdn = (host: string) => `${host}.${FLEET_DOMAIN}`;
  /** What the host's nginx answers at the host's name, as a browser there would ask. */
  const page = async (host: string, path: string) => {
    const said = await run(
      'curl',
      [
        ...['-sS', '-w', '\n%{http_code}', '--resolve'],
        `${fqdn(host)}:80:${fleet.host(host).address}`,
        `http://${fqdn(host)}${path}`,
      ],
      { encoding: 'utf8' },
    ).catch((error: { stdout: string; stderr: string }) => ({
      stdout: `${error.stderr}\n000`,
    }));
    const lines = said.stdout.split('\n');
    return { status: Number(lines.at(-1)), body: lines.slice(0, -1).join('\n') };
  };
  /** git on this machine, reaching a host's gitolite3 over ssh with one key only. */
  const git = (keyName: string, cwd: string, ...args: string[]) =>
    run('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: keys,
        GIT_SSH_COMMAND: `ssh -F ${fleet.sshConfig} -i ${key(keyName)} -o IdentitiesOnly=yes`,
        GIT_CONFIG_NOSYSTEM: '1',
      },
    }).then(
      (done) => ({ code: 0, stderr: done.stderr }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
  /** A new repository with one commit, pushed to `name` on `host` as `keyName`. */
  const push = async (host: string, keyName: string, name: string, text: string) => {
    const dir = await mkdtemp(join(keys, 'work-'));
    await writeFile(join(dir, 'README'), `${text}\n`);
    for (const args of [
      ['init', '-q', '-b', 'main'],
      ['add', 'README'],
      ['-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-qm', text],
    ])
      assert.equal((await git(keyName, dir, ...args)).code, 0);
    return git(keyName, dir, 'push', '-q', `gitolite3@${host}:${name}`, 'main');
  };

  before(async () => {
    held = await packageFleet({
      hosts: 2,
      repository: repository as string,
      // The fleet's sshd reads every user's keys from files of its own; a Debian host's
      // reads ~/.ssh/authorized_keys, where gitolite puts the keys it lets in.
      sshdOptions: ['Match User gitolite3', '  AuthorizedKeysFile .ssh/authorized_keys'],
    });
    ({ fleet, runtime } = held);
    keys = await mkdtemp('/tmp/bfg-keys-');
    for (const name of ['admin', 'admin2', 'stranger'])
      await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key(name)]);
    // Fresh hosts: what this machine has installed of the forge's packages is not theirs.
    await Promise.all(
      fleet.hosts.map(({ name }) =>
        on(
          name,
          [
            'export DEBIAN_FRONTEND=noninteractive',
            'apt-get purge -y -q nginx nginx-common git gitolite3 cgit fcgiwrap spawn-fcgi >/dev/null 2>&1',
            `rm -rf /etc/nginx /etc/gitolite3 /etc/cgitrc ${HOME}`,
            'userdel gitolite3 2>/dev/null; groupdel gitolite3 2>/dev/null; true',
          ].join('; '),
        ),
      ),
    );
    world = await makeWorld();
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      values: { '@all': { admin_key: publicKey('admin') } },
      sshConfig: 'ssh_config',
    });
    await copyFile(
      join(EXAMPLES, 'git-forge.json'),
      join(world.state, 'modules', 'git-forge.json'),
    );
    await cp(join(EXAMPLES, 'git-forge'), join(world.state, 'modules', 'git-forge'), {
      recursive: true,
    });
  });
  after(async () => {
    await world?.cleanup();
    if (keys) await rm(keys, { recursive: true, force: true });
    await held?.stop();
  });

  it('brings a fresh host to a forge in one converge: a push over ssh lands a repository cgit lists', async () => {
    assert.equal((await on('alpha', 'command -v gitolite cgit nginx || true')).trim(), '');
    assert.equal((await berth('assign', 'alpha', 'git-forge')).code, 0);
    const said = await preview('converge', 'alpha');
    for (const name of ['gitolite3', 'cgit', 'fcgiwrap', 'nginx'])
      assert.match(said.stdout, new RegExp(`\n {2}install package ${name} \\S+`));
    const done = await act(said, '--lock-timeout', '1m', 'converge', 'alpha');
    assert.match(done.stdout, /\nalpha is as assigned\n$/);
    // Its check passes with no repository yet, so a second converge has nothing to do.
    assert.match(
      (await preview('converge', 'alpha')).stdout,
      /alpha is as assigned: nothing to do/,
    );

    const pushed = await push('alpha', 'admin', 'demo', 'first commit');
    assert.equal(pushed.code, 0, pushed.stderr);
    const index = await page('alpha', '/');
    assert.equal(index.status, 200, index.body);
    assert.match(index.body, /href='\/demo\/'/);
    // The admin repository, keys and conf, is never published.
    assert.doesNotMatch(index.body, /gitolite-admin|testing/);
    assert.equal((await page('alpha', '/gitolite-admin/')).status, 404);
    const summary = await page('alpha', '/demo/');
    assert.equal(summary.status, 200);
    assert.match(summary.body, /first commit/);
    assert.equal((await page('alpha', '/demo/plain/README')).body, 'first commit\n');
    const clone = await mkdtemp(join(keys, 'clone-'));
    const cloned = await git(
      'stranger',
      clone,
      ...['-c', `http.curloptResolve=${fqdn('alpha')}:80:${fleet.host('alpha').address}`],
      ...['clone', '-q', `http://${fqdn('alpha')}/demo`, 'demo'],
    );
    assert.equal(cloned.code, 0, cloned.stderr);
    assert.equal(await readFile(join(clone, 'demo', 'README'), 'utf8'), 'first commit\n');
  });

  it("a key that is not the admin's creates nothing and reads nothing over ssh", async () => {
    const refused = await push('alpha', 'stranger', 'intruder', 'not mine');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Permission denied \(publickey\)/);
    assert.equal(
      (await fleet.host('alpha').exec(`test -e ${HOME}/repositories/intruder.git`)).code,
      1,
    );
  });

  it('a new admin key in the value is let in by the converge, and the old one no longer', async () => {
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      values: {
        '@all': { admin_key: publicKey('admin') },
        alpha: { admin_key: publicKey('admin2') },
      },
      sshConfig: 'ssh_config',
    });
    const said = await preview('converge', 'alpha');
    assert.match(said.stdout, /\/etc\/gitolite3\/berth\/admin\.pub[^\n]*value admin_key/);
    await act(said, 'converge', 'alpha');
    const pushed = await push('alpha', 'admin2', 'second', 'by the new key');
    assert.equal(pushed.code, 0, pushed.stderr);
    const old = await push('alpha', 'admin', 'third', 'by the old key');
    assert.match(old.stderr, /Permission denied \(publickey\)/);
    assert.match((await page('alpha', '/')).body, /href='\/second\/'/);
  });

  it('a take of a forge set up by hand finds its repositories and changes nothing', async () => {
    // By hand, as an operator following the module: the packages, its files as berth would
    // write them for bravo, its start.
    await on(
      'bravo',
      `DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${DEFINITION.packages.join(' ')} >/dev/null 2>&1`,
    );
    const values: Record<string, string> = {
      '{{fact fqdn}}': fqdn('bravo'),
      '{{value http_port}}': '80',
      '{{value admin_key}}': publicKey('admin'),
    };
    for (const [path, file] of Object.entries(DEFINITION.files)) {
      let text = file.content ?? readFileSync(join(EXAMPLES, file.source ?? ''), 'utf8');
      for (const [placeholder, value] of Object.entries(values))
        text = text.replaceAll(placeholder, value);
      assert.doesNotMatch(text, /\{\{/, path);
      const written = await fleet
        .host('bravo')
        .exec(`mkdir -p "$(dirname ${path})" && cat > ${path} && chmod ${file.mode} ${path}`, text);
      assert.equal(written.code, 0, written.stderr);
    }
    await on('bravo', 'sh /etc/gitolite3/berth/ctl.sh start >/dev/null');
    const pushed = await push('bravo', 'admin', 'kept', 'made by hand');
    assert.equal(pushed.code, 0, pushed.stderr);
    const files = Object.keys(DEFINITION.files).join(' ');
    const before = await on(
      'bravo',
      `sha256sum ${files}; ls -ln ${files}; ls ${HOME}/repositories`,
    );

    assert.equal((await berth('adopt', 'bravo')).code, 0);
    const said = await preview('take', 'bravo', 'git-forge');
    assert.match(said.stdout, new RegExp(`${HOME}[^\n]*found`));
    assert.match(said.stdout, /\ncheck: passes, so git-forge is taken as running\n/);
    assert.doesNotMatch(said.stdout, /differ|missing/);
    await act(said, 'take', 'bravo', 'git-forge');
    assert.match(
      (await preview('converge', 'bravo')).stdout,
      /bravo is as assigned: nothing to do/,
    );
    assert.equal(
      await on('bravo', `sha256sum ${files}; ls -ln ${files}; ls ${HOME}/repositories`),
      before,
    );
    assert.match((await page('bravo', '/kept/')).body, /made by hand/);
  });

  it('a release stops the forge and keeps its repositories, served again once taken back', async () => {
    assert.equal((await berth('unassign', 'alpha', 'git-forge')).code, 0);
    const said = await preview('converge', 'alpha');
    assert.match(said.stdout, /stay on alpha/);
    await act(said, 'converge', 'alpha');
    assert.equal((await page('alpha', '/')).status, 0);
    assert.equal(
      await on(
        'alpha',
        `runuser -u gitolite3 -- git --git-dir=${HOME}/repositories/demo.git log --format=%s main`,
      ),
      'first commit\n',
    );

    assert.equal((await berth('adopt', 'alpha')).code, 0);
    const take = await preview('take', 'alpha', 'git-forge');
    await act(take, 'take', 'alpha', 'git-forge');
    const converge = await preview('converge', 'alpha');
    await act(converge, 'converge', 'alpha');
    assert.match((await page('alpha', '/demo/plain/README')).body, /^first commit\n$/);
    assert.match((await page('alpha', '/')).body, /href='\/second\/'/);
  });
});
