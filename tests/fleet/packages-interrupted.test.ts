/**
 * A converge cut while apt installs, over ssh on fresh fleet hosts, through the real
 * binary: berth told to stop (SIGINT, as Ctrl-C sends it), berth killed (SIGKILL), and the
 * host's link cut, each while a package the test builds with dpkg-deb runs its slow
 * postinst. berth recorded that it manages the module before its first change there, so
 * the next converge (one preview, one act) carries it on: never blocked as data berth does
 * not manage, and status never advises removing the module's packages. An install killed on
 * the host too (as a host that loses its power would) leaves berth's policy-rc.d: the survey
 * finds it, the preview and status name it, and the next act removes it, putting the host's
 * own back. Skipped, saying why, where the fleet cannot run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BERTH, digestOf, makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';
import { buildAptRepository } from './apt-repository.ts';
import { type Fleet, fleetUnavailable, onHost } from './fleet.ts';
import { type PackageFleet, packageFleet } from './package-fleet.ts';

/** A package whose postinst takes a while: the act is cut while it runs. */
function slowPackage(name: string) {
  return {
    name,
    version: '1.0',
    // The module's data comes with the package: found on the host once it is unpacked.
    files: { [`/var/lib/${name}/seed`]: 'seed\n' },
    postinst: `#!/bin/sh\ntouch /var/lib/${name}.configuring\nsleep 8\n`,
  };
}

/** A module running that package: its data, a file of berth's, and a start. */
function slowModule(name: string) {
  return {
    packages: [name],
    data: [`/var/lib/${name}`],
    files: { [`/etc/berth-test/${name}.conf`]: { content: 'slow\n' } },
    start: `touch /var/lib/berth-test/${name}.started`,
  };
}

/**
 * A module whose first start hangs (its daemon, say, slow to come up): the act is cut
 * while its hook runs. Started again, it starts.
 */
const HOOK_MODULE = {
  packages: ['berth-test-slow'],
  data: ['/var/lib/berth-test-hook'],
  files: { '/etc/berth-test/hook.conf': { content: 'hook\n' } },
  start:
    'if [ -e /var/lib/berth-test-hook/tried ]; then touch /var/lib/berth-test/berth-test-hook.started; else touch /var/lib/berth-test-hook/tried; sleep 60; fi',
};

const HOST_OWN_POLICY = "#!/bin/sh\n# the host's own\nexit 0\n";

const unavailable = fleetUnavailable();
const repository = unavailable
  ? { skip: unavailable }
  : await buildAptRepository([], [slowPackage('berth-test-slow'), slowPackage('berth-test-held')]);
const skip = typeof repository === 'string' ? false : repository.skip;

describe('a converge cut while apt installs, carried on by the next', {
  skip,
  timeout: 600_000,
}, () => {
  let held: PackageFleet | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const env = () => ({ XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: undefined });
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], env());
  /** berth acting on a preview, as a process the test can signal. */
  const acting = (node: string, preview: Run) => {
    const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, SSH_AUTH_SOCK: ___, ...rest } = process.env;
    const args = ['converge', node, '--yes', '--digest', digestOf(preview.stdout)];
    const child = spawn(process.execPath, [BERTH, '--state', world.state, ...args], {
      env: { ...rest, XDG_RUNTIME_DIR: runtime },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const ended = new Promise<Run>((done) =>
      child.on('close', (code, signal) =>
        done({ code: signal === 'SIGKILL' ? 137 : (code ?? 1), stdout, stderr }),
      ),
    );
    return { child, ended };
  };
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  /** Waits for `script` to succeed on the host, a minute at most. */
  const until = async (host: string, script: string) => {
    const deadline = Date.now() + 60_000;
    while ((await fleet.host(host).exec(script)).code !== 0) {
      assert.ok(Date.now() < deadline, `${host}: still not ${script}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  };
  /**
   * The host's install runs on without berth: the next converge begins once it is over
   * (what a host's pid 1 has not reaped yet is over too).
   */
  const installOver = (host: string) =>
    until(
      host,
      '! pgrep -r D,R,S,T -x apt-get >/dev/null && ! pgrep -r D,R,S,T -x dpkg >/dev/null',
    );
  /**
   * Waits until this machine reaches the host's sshd again, a minute at most: a link just
   * brought up carries nothing for a moment, and the words say to converge once it answers.
   */
  const answers = async (host: string) => {
    const deadline = Date.now() + 60_000;
    const reached = () =>
      new Promise<boolean>((done) => {
        const socket = connect({ host: fleet.host(host).address, port: 22, timeout: 1000 });
        const end = (ok: boolean) => {
          socket.destroy();
          done(ok);
        };
        socket.on('connect', () => end(true));
        socket.on('error', () => end(false));
        socket.on('timeout', () => end(false));
      });
    while (!(await reached())) {
      assert.ok(Date.now() < deadline, `${host} does not answer again`);
      await new Promise((done) => setTimeout(done, 100));
    }
  };
  /** Assigns the module and begins its act, cut once the package's postinst runs. */
  const cutInPostinst = async (host: string, name: string) => {
    assert.equal((await berth('assign', host, name)).code, 0);
    const preview = await berth('converge', host);
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, new RegExp(`^ {2}install package ${name} 1\\.0$`, 'm'));
    const act = acting(host, preview);
    await until(host, `test -e /var/lib/${name}.configuring`);
    return act;
  };
  /** The next converge, one preview and its act, carries the module on to running. */
  const carriedOn = async (host: string, name: string) => {
    const preview = await berth('converge', host);
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /blocked/, preview.stdout);
    assert.match(preview.stdout, new RegExp(`^update ${name}:$`, 'm'));
    const done = await berth(
      '--lock-timeout',
      '1m',
      'converge',
      host,
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.match(done.stdout, new RegExp(`\nran start of ${name}\n${host} is as assigned\n$`));
    assert.equal(await on(host, `cat /var/lib/${name}/seed`), 'seed\n');
    await on(host, `test -e /var/lib/berth-test/${name}.started`);
    assert.match(await on(host, `dpkg-query -W -f='\${db:Status-Status}' ${name}`), /^installed$/);
    assert.equal((await berth('converge', host)).stdout.includes('nothing to do'), true);
  };

  before(async () => {
    held = await packageFleet({ hosts: 3, repository: repository as string });
    ({ fleet, runtime } = held);
    world = await makeWorld({
      'berth-test-slow': slowModule('berth-test-slow'),
      'berth-test-held': slowModule('berth-test-held'),
      'berth-test-hook': HOOK_MODULE,
    });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: {
        alpha: { ssh: 'alpha' },
        bravo: { ssh: 'bravo', sudo: true },
        charlie: { ssh: 'charlie' },
      },
      sshConfig: 'ssh_config',
    });
  });
  after(async () => {
    await world?.cleanup();
    await held?.stop();
  });

  it("told to stop (Ctrl-C's SIGINT) mid-install: the next converge carries it on; status advises removing nothing", async () => {
    const act = await cutInPostinst('alpha', 'berth-test-slow');
    act.child.kill('SIGINT');
    const cut = await act.ended;
    assert.equal(cut.code, 1, cut.stdout + cut.stderr);
    assert.match(cut.stdout, /^berth manages berth-test-slow on alpha\ninstalled package /);
    assert.match(
      cut.stderr,
      /converge of alpha stopped before berth-test-slow's next step: berth was interrupted by SIGINT/,
    );
    const status = await berth('status', 'alpha');
    assert.match(
      status.stdout,
      /managed: berth-test-slow \(by converge, since [^,]+, not yet started\)/,
    );
    assert.doesNotMatch(status.stdout, /nothing it runs needs|remove them by hand/);
    await carriedOn('alpha', 'berth-test-slow');
  });

  it('killed (SIGKILL) mid-install: the install ends on the host, and the next converge carries it on', async () => {
    const act = await cutInPostinst('bravo', 'berth-test-slow');
    act.child.kill('SIGKILL');
    assert.equal((await act.ended).code, 137);
    await installOver('bravo');
    const status = await berth('status', 'bravo');
    assert.match(
      status.stdout,
      /managed: berth-test-slow \(by converge, since [^,]+, not yet started\)/,
    );
    // berth cannot know from its records alone whether the install it began left its hold.
    assert.match(
      status.stdout,
      /berth's policy-rc\.d may still be on bravo, left by an install it began \S+ and did not see end/,
    );
    await carriedOn('bravo', 'berth-test-slow');
    // The converge looked: the install had lifted its hold itself.
    assert.doesNotMatch((await berth('status', 'bravo')).stdout, /policy-rc\.d/);
  });

  it("the link cut mid-install: said as the host gone silent, in ssh's words; the next converge carries it on", async () => {
    const act = await cutInPostinst('charlie', 'berth-test-slow');
    await on('charlie', 'ip link set eth0 down');
    const cut = await act.ended;
    await on('charlie', 'ip link set eth0 up');
    assert.equal(cut.code, 1, cut.stdout + cut.stderr);
    assert.match(
      cut.stderr,
      /^converge of charlie stopped at berth-test-slow: charlie went silent while apt ran there \(ssh: [^)]+\); apt may still be at work on charlie: converge it again once it answers\n$/,
    );
    assert.doesNotMatch(cut.stderr, /Unpacking|Setting up|Selecting/);
    await installOver('charlie');
    await answers('charlie');
    await carriedOn('charlie', 'berth-test-slow');
  });

  it('killed (SIGKILL) while its start hook runs: the next converge carries it on to started', async () => {
    await on('charlie', 'rm -rf /var/lib/berth-test-hook');
    assert.equal((await berth('assign', 'charlie', 'berth-test-hook')).code, 0);
    const preview = await berth('converge', 'charlie');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /^install berth-test-hook:$/m);
    const act = acting('charlie', preview);
    await until('charlie', 'test -e /var/lib/berth-test-hook/tried');
    act.child.kill('SIGKILL');
    assert.equal((await act.ended).code, 137);
    const status = await berth('status', 'charlie');
    assert.match(
      status.stdout,
      /managed: [^\n]*berth-test-hook \(by converge, since [^,]+, not yet started\)/,
    );
    assert.doesNotMatch(status.stdout, /nothing it runs needs|remove them by hand/);

    const again = await berth('converge', 'charlie');
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stdout, /blocked/, again.stdout);
    assert.match(again.stdout, /^update berth-test-hook:\n {2}run start: /m);
    const done = await berth('converge', 'charlie', '--yes', '--digest', digestOf(again.stdout));
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.match(done.stdout, /\nran start of berth-test-hook\ncharlie is as assigned\n$/);
    await on('charlie', 'test -e /var/lib/berth-test/berth-test-hook.started');
    assert.match((await berth('converge', 'charlie')).stdout, /nothing to do/);
  });

  it("an install killed on the host too leaves berth's policy-rc.d: found, named, and removed by the next act, the host's own put back", async () => {
    const own = await fleet
      .host('bravo')
      .exec('cat > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d', HOST_OWN_POLICY);
    assert.equal(own.code, 0, own.stderr);
    const act = await cutInPostinst('bravo', 'berth-test-held');
    act.child.kill('SIGKILL');
    // The install's every process dies at once, as on a host that lost its power: its sh
    // gets no chance to lift its hold.
    await on(
      'bravo',
      'for p in $(pgrep -x apt-get) $(pgrep -x dpkg); do s=$(ps -o sid= -p "$p") && pkill -KILL -s $s; done; true',
    );
    await installOver('bravo');
    assert.match(
      await on('bravo', 'cat /usr/sbin/policy-rc.d'),
      /^# berth: no service starts while berth installs packages$/m,
    );
    const status = await berth('status', 'bravo');
    assert.match(status.stdout, /berth's policy-rc\.d may still be on bravo/);

    const preview = await berth('converge', 'bravo');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /^update berth-test-held:\n {2}remove berth's policy-rc\.d, left on bravo by an install that was cut: while it stands no service starts or restarts there \(the node's own is put back\)\n {2}install package berth-test-held 1\.0\n/m,
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
      /^removed berth's policy-rc\.d from bravo: services start there again, under the node's own policy-rc\.d, put back\ninstalled package berth-test-held 1\.0\n/,
    );
    assert.equal(await on('bravo', 'cat /usr/sbin/policy-rc.d'), HOST_OWN_POLICY);
    assert.equal(
      (await fleet.host('bravo').exec('test -e /usr/sbin/policy-rc.d.berth-kept')).code,
      1,
    );
    await on('bravo', 'test -e /var/lib/berth-test/berth-test-held.started');
    assert.doesNotMatch((await berth('status', 'bravo')).stdout, /policy-rc\.d/);
  });
});
