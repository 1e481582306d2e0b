/**
 * A module's packages installed on this machine (a node whose root is `/`) with its own
 * apt: Debian's `hello`, which the lists offer. The preview names the exact version; the
 * act installs it before the module's files; a pin the lists do not offer, a package
 * installed by hand after the preview, and apt's lock held by another process each refuse
 * in words; release leaves it installed. Needs root, apt-get, `hello` in the lists
 * (`apt-get update` run) and no `hello` installed; skipped otherwise. `hello` is purged
 * after; this machine's policy-rc.d is given back as it was found.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { candidateOf, holdMachineApt, refuseHelloInstalls } from '../helpers/machine-apt.ts';
import { asFound, type KeptFiles, keepAsFound } from '../helpers/machine-files.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const FILE = '/etc/berth-test-greet/greeting';
/** An apt configuration a test puts in place for a moment, to have apt refuse. */

const found = candidateOf('hello');
/** The machine's own hello is not the suite's to install and purge. */
const own =
  typeof found === 'string' &&
  installedHello() !== undefined &&
  'needs a machine without hello installed: the suite installs and purges it (apt-get purge hello)';
const skip = typeof found === 'string' ? own : found.skip;
const CANDIDATE = typeof found === 'string' ? found : '';
/** berth holds starts with it while installing; this machine may have its own. */
const POLICY = '/usr/sbin/policy-rc.d';

function purgeHello() {
  execFileSync('apt-get', ['purge', '-y', '-q', '-o', 'DPkg::Lock::Timeout=300', 'hello'], {
    stdio: 'ignore',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function installedHello(): string | undefined {
  try {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format
    const format = '-f=${db:Status-Status} ${Version}';
    const said = execFileSync('dpkg-query', ['-W', format, 'hello'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return said.startsWith('installed ') ? said.slice('installed '.length) : undefined;
  } catch {
    return undefined;
  }
}

/** Holds apt's frontend lock as dpkg does (an fcntl lock), until killed. */
async function holdAptLock(): Promise<ChildProcess> {
  const script = `use Fcntl;
open(my $fh, '+<', '/var/lib/dpkg/lock-frontend') or die "open: $!";
fcntl($fh, F_SETLKW, pack('s s x4 q q i x4', F_WRLCK, SEEK_SET, 0, 0, 0)) or die "lock: $!";
$| = 1; print "held\\n"; sleep 600;`;
  const holder = spawn('perl', ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((done) => holder.stdout?.once('data', () => done()));
  return holder;
}

describe("a module's packages, installed by this machine's apt", { skip }, () => {
  let release: (() => Promise<void>) | undefined;
  let world: World;
  let machines: KeptFiles | undefined;
  const greet = { packages: ['hello'], files: { [FILE]: { content: 'hi\n' } } };
  /**
   * An act that stopped before greet's files left it managed (berth records that first);
   * berth forgets it, so that the next test installs it afresh.
   */
  const managedOnlyAsRecord = async () => {
    assert.deepEqual(Object.keys((await world.readState()).managed?.here ?? {}), ['greet']);
    for (const command of ['unassign', 'forget', 'assign'])
      assert.equal((await world.berth(command, 'here', 'greet')).code, 0, command);
  };
  before(async () => {
    release = await holdMachineApt();
    machines = keepAsFound(POLICY, `${POLICY}.berth-kept`);
    world = await makeWorld({ greet });
    await world.writeSettings({ nodes: { here: { root: '/' } } });
    await rm('/etc/berth-test-greet', { recursive: true, force: true });
    assert.equal((await world.berth('assign', 'here', 'greet')).code, 0);
  });
  after(async () => {
    purgeHello();
    await rm('/etc/berth-test-greet', { recursive: true, force: true });
    await world.cleanup();
    machines?.giveBack();
    await release?.();
  });

  it('a pinned version the lists do not offer is a blocker naming what they offer', async () => {
    await world.writeModule('greet', { ...greet, packages: [{ name: 'hello', version: '9.9-9' }] });
    const preview = await world.berth('converge', 'here');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      new RegExp(
        `blocked: hello 9\\.9-9 is not in here's package lists \\(they offer ${CANDIDATE.replaceAll('.', '\\.')}\\); refresh them with berth converge here --refresh`,
      ),
    );
    const json = JSON.parse((await world.berth('converge', 'here', '--json')).stdout);
    assert.deepEqual(json.nodes.here.blockers[0], {
      code: 'package_unavailable',
      kind: 'package-unavailable',
      module: 'greet',
      package: 'hello',
      version: '9.9-9',
      offered: [CANDIDATE],
      words: json.nodes.here.blockers[0].words,
    });
    const act = await world.actOn(preview, 'converge', 'here');
    assert.equal(act.code, 1);
    assert.match(act.stderr, /the act is refused while a blocker stands: hello 9\.9-9 is not in/);
    assert.equal(installedHello(), undefined);
    await world.writeModule('greet', greet);
  });

  it('apt held by another process is waited on, then refused naming it; nothing of the module is written', async () => {
    const preview = await world.berth('converge', 'here');
    const holder = await holdAptLock();
    try {
      const act = await world.actOn(preview, '--lock-timeout', '1s', 'converge', 'here');
      assert.equal(act.code, 1);
      assert.match(
        act.stderr,
        new RegExp(
          `converge of here stopped at greet: apt on here is busy \\(held by perl, pid ${holder.pid}\\); berth waited 1s for it to install hello`,
        ),
      );
    } finally {
      holder.kill();
    }
    assert.equal(installedHello(), undefined);
    assert.equal(existsSync(FILE), false);
    // Managed before its first change: the next converge carries it on.
    await managedOnlyAsRecord();
  });

  it('a package installed by hand between preview and act refuses the act, naming it', async () => {
    const preview = await world.berth('converge', 'here');
    assert.match(
      preview.stdout,
      new RegExp(`install package hello ${CANDIDATE.replaceAll('.', '\\.')}\n`),
    );
    execFileSync('apt-get', ['install', '-y', '-q', '-o', 'DPkg::Lock::Timeout=300', 'hello'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const act = await world.actOn(preview, 'converge', 'here');
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      new RegExp(`package hello is now installed on here at ${CANDIDATE.replaceAll('.', '\\.')}`),
    );
    assert.equal(existsSync(FILE), false);
    purgeHello();
  });

  it("an install apt refuses is said in apt's own E: lines, and nothing else of the module is written", async () => {
    // apt on this node refuses any install of hello=<version> (berth's), and no other.
    const refusing = await refuseHelloInstalls(world.dir);
    try {
      const preview = await world.berth('converge', 'here');
      const act = await world.actOn(preview, '--lock-timeout', '5m', 'converge', 'here');
      assert.equal(act.code, 1);
      assert.equal(
        act.stderr,
        `converge of here stopped at greet: installing hello on here failed: E: Problem executing scripts DPkg::Pre-Invoke 'sh ${refusing.script}' E: Sub-process returned an error code\n`,
      );
    } finally {
      await refusing.undo();
    }
    assert.equal(installedHello(), undefined);
    assert.equal(existsSync(FILE), false);
    await managedOnlyAsRecord();
  });

  it('the preview names the exact version; the act installs it before the files, and hello runs', async () => {
    // The node's own policy-rc.d is its own again after the install; this machine's own,
    // if it has one, is given back as it was.
    const machines = keepAsFound(POLICY);
    await writeFile(POLICY, "#!/bin/sh\n# the node's own\nexit 0\n", { mode: 0o755 });
    try {
      const preview = await world.berth('converge', 'here');
      assert.equal(
        preview.stdout,
        [
          'converge here',
          'install greet:',
          '  record that berth manages it',
          `  install package hello ${CANDIDATE}`,
          `  write ${FILE} (mode 0644)`,
          `digest ${digestOf(preview.stdout)}`,
          '',
        ].join('\n'),
      );
      const json = JSON.parse((await world.berth('converge', 'here', '--json')).stdout);
      assert.deepEqual(json.nodes.here.steps[1], {
        kind: 'package',
        module: 'greet',
        package: 'hello',
        version: CANDIDATE,
        how: 'install',
      });
      // Other work on this machine may hold apt a while.
      const act = await world.berth(
        '--lock-timeout',
        '5m',
        'converge',
        'here',
        '--yes',
        '--digest',
        json.digest,
      );
      assert.equal(act.code, 0, act.stderr);
      assert.equal(
        act.stdout,
        `berth manages greet on here\ninstalled package hello ${CANDIDATE}\nwrote ${FILE}\nhere is as assigned\n`,
      );
      assert.equal(installedHello(), CANDIDATE);
      assert.equal(execFileSync('hello', { encoding: 'utf8' }), 'Hello, world!\n');
      assert.equal(await readFile(FILE, 'utf8'), 'hi\n');
      assert.equal(
        await readFile('/usr/sbin/policy-rc.d', 'utf8'),
        "#!/bin/sh\n# the node's own\nexit 0\n",
      );
      assert.equal(existsSync('/usr/sbin/policy-rc.d.berth-kept'), false);
      const again = await world.berth('converge', 'here');
      assert.match(again.stdout, /here is as assigned: nothing to do/);
    } finally {
      machines.giveBack();
    }
  });

  it("--refresh fetches the node's lists anew before the preview, journaled as an act of its own", async () => {
    const preview = await world.berth('--lock-timeout', '5m', 'converge', 'here', '--refresh');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /^refreshed here's package lists \(apt-get update\)\nconverge here\n/,
    );
    const refresh = (await world.journal()).filter((entry) => entry.act === 'refresh');
    assert.deepEqual(
      refresh.map(({ node, outcome, said }) => ({ node, outcome, said })),
      [{ node: 'here', outcome: 'done', said: "refreshed here's package lists (apt-get update)" }],
    );
    const act = await world.actOn(preview, 'converge', 'here', '--refresh');
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      /^--refresh refreshes the package lists before a preview: preview with it \(berth converge here --refresh\)/,
    );
  });

  it('release leaves the package installed, and says so', async () => {
    assert.equal((await world.berth('unassign', 'here', 'greet')).code, 0);
    const preview = await world.berth('converge', 'here');
    assert.match(
      preview.stdout,
      /stop managing it; its data, secrets, files and packages \(hello\) stay on here/,
    );
    const act = await world.actOn(preview, 'converge', 'here');
    assert.equal(act.code, 0, act.stderr);
    assert.match(
      act.stdout,
      /released greet: berth no longer manages it on here; its data, secrets, files and packages \(hello\) stay/,
    );
    assert.equal(installedHello(), CANDIDATE);
    const status = await world.berth('status', 'here');
    assert.match(
      status.stdout,
      /\n {2}packages berth installed that nothing it runs needs: hello \(still installed: remove them by hand if nothing else uses them\)\n/,
    );
    const json = JSON.parse((await world.berth('status', 'here', '--json')).stdout);
    assert.deepEqual(json.nodes[0].unneededPackages, ['hello']);
  });

  it("leaves this machine's policy-rc.d as it found it: the same bytes, mode and owner, or none", () => {
    assert.ok(machines && asFound(machines), `${POLICY} is not as the suite found it`);
  });
});
