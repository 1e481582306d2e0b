/**
 * berth itself over ssh, through the real binary, against the fleet's real sshd hosts:
 * the whole story on ssh nodes, the round trips it takes (sshd sessions, counted on the
 * hosts), sudo, a changed host key, a hook stopped by Ctrl-C, secrets off command lines,
 * and twenty converges at once. berth.json names the fleet's ssh config (`sshConfig`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { vaultValues } from '../commands/support.ts';
import { until } from '../helpers/safety.ts';
import { BERTH, digestOf, makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';
import {
  exitMasters as exitFleetMasters,
  type Fleet,
  type FleetHost,
  fleetUnavailable,
  onHost,
  startFleet,
} from './fleet.ts';

/** A module whose every path is its own, under the hosts' private paths. */
function moduleAt(
  name: string,
  start = `echo "$BERTH_NODE $BERTH_MODULE $BERTH_ROOT" > /var/lib/berth-test/${name}.started`,
) {
  return {
    description: `fleet module ${name}`,
    data: [`/var/lib/berth-test/${name}`],
    secrets: { token: { path: `/etc/berth-test/${name}/token` } },
    files: {
      [`/etc/berth-test/${name}/${name}.conf`]: {
        mode: '0640',
        content: `name = ${name}\ntoken = {{secret token}}\n`,
      },
    },
    start,
    stop: `rm -f /var/lib/berth-test/${name}.started`,
  };
}

/** Ten modules: `notes`, and nine more to make the catalog ten. */
const CATALOG: Record<string, unknown> = { notes: moduleAt('notes') };
for (let index = 1; index <= 9; index++) CATALOG[`pad${index}`] = moduleAt(`pad${index}`);

/** Twenty nodes, seven or six a host, each with a module of its own paths. */
const MANY = Array.from({ length: 20 }, (_, index) => ({
  node: `n${index}`,
  host: ['alpha', 'bravo', 'charlie'][index % 3] as string,
  module: `w${index}`,
}));

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('berth over ssh, on the fleet', () => {
  let fleet: Fleet;
  let world: World;
  /** berth's ControlMaster sockets: XDG_RUNTIME_DIR/berth-ssh, short enough for a socket. */
  let runtime: string;

  const env = () => ({ XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: undefined });
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], env());
  const converge = async (node: string, ...args: string[]) => {
    const preview = await berth('converge', node, ...args);
    assert.equal(preview.code, 0, preview.stderr);
    return berth('converge', node, ...args, '--yes', '--digest', digestOf(preview.stdout));
  };
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  /** What one berth command costs on a host: sshd sessions and connections it opened. */
  const costOn = async <T>(host: FleetHost, work: () => Promise<T>) => {
    const [sessions, connections] = [await host.sessionsOpened(), await host.connectionsAccepted()];
    const result = await work();
    return {
      result,
      sessions: (await host.sessionsOpened()) - sessions,
      connections: (await host.connectionsAccepted()) - connections,
    };
  };
  /** Ends every ControlMaster berth left: none may outlive the test. */
  const exitMasters = () => exitFleetMasters(join(runtime, 'berth-ssh'));

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 3, sshdOptions: ['MaxSessions 30', 'MaxStartups 60'] });
    runtime = await mkdtemp('/tmp/bfr-');
    world = await makeWorld(CATALOG);
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    const nodes: Record<string, unknown> = {
      alpha: { ssh: 'alpha' },
      bravo: { ssh: 'bravo', sudo: true },
      charlie: { ssh: 'charlie' },
    };
    for (const { node, host } of MANY)
      nodes[node] = { ssh: host, ...(host === 'bravo' ? { sudo: true } : {}) };
    await world.writeSettings({ nodes, sshConfig: 'ssh_config' });
  });
  after(async () => {
    if (skip) return;
    if (runtime) await exitMasters();
    await fleet?.stop();
    await world?.cleanup();
    if (runtime) await rm(runtime, { recursive: true, force: true });
  });

  it('adopts a node with a ten-module catalog in one sshd session: found on alpha, nothing on charlie', {
    skip,
  }, async () => {
    await on(
      'alpha',
      'mkdir -p /var/lib/berth-test/notes /etc/berth-test/notes && echo kept > /var/lib/berth-test/notes/db && printf hunter2 > /etc/berth-test/notes/token',
    );
    const alpha = await costOn(fleet.host('alpha'), () => berth('adopt', 'alpha'));
    assert.equal(alpha.result.code, 0, alpha.result.stderr);
    assert.match(alpha.result.stdout, /^ {2}data \/var\/lib\/berth-test\/notes: found$/m);
    assert.match(alpha.result.stdout, /^ {2}secret token .*found, fingerprint/m);
    assert.match(alpha.result.stdout, /^pad1: holds nothing$/m);
    assert.equal(alpha.sessions, 1, 'one round trip for ten modules');
    assert.ok(alpha.connections <= 1, `at most one connection, not ${alpha.connections}`);
    const charlie = await costOn(fleet.host('charlie'), () => berth('adopt', 'charlie'));
    assert.equal(charlie.result.code, 0, charlie.result.stderr);
    assert.equal(charlie.sessions, 1);
    for (const module of Object.keys(CATALOG)) {
      assert.match(charlie.result.stdout, new RegExp(`^${module}: holds nothing$`, 'm'));
    }
    const accounts = (await world.readState()).accounts as Record<string, unknown>;
    const found = JSON.stringify(accounts.alpha);
    assert.match(found, /notes/);
    assert.doesNotMatch(found, /hunter2/, 'no secret value in the account');
    assert.notDeepEqual(accounts.alpha, accounts.charlie);
  });

  it('takes the found secret into the vault, and previews a converge in one session', {
    skip,
  }, async () => {
    const take = await berth('take', 'alpha', 'notes');
    assert.equal(take.code, 0, take.stderr);
    const act = await berth('take', 'alpha', 'notes', '--yes', '--digest', digestOf(take.stdout));
    assert.equal(act.code, 0, act.stderr);
    assert.equal((await vaultValues(world))['alpha/notes/token'], 'hunter2');
    assert.equal(await on('alpha', 'cat /var/lib/berth-test/notes/db'), 'kept\n', 'data kept');
    const preview = await costOn(fleet.host('alpha'), () => berth('converge', 'alpha'));
    assert.equal(preview.result.code, 0, preview.result.stderr);
    assert.equal(preview.sessions, 1, 'a converge preview is one round trip');
  });

  it('converges charlie: files with their modes, a minted secret 0600, the hook with its environment, in three sessions', {
    skip,
  }, async () => {
    assert.equal((await berth('assign', 'charlie', 'notes')).code, 0);
    const preview = await costOn(fleet.host('charlie'), () => berth('converge', 'charlie'));
    assert.equal(preview.result.code, 0, preview.result.stderr);
    assert.equal(preview.sessions, 1, 'a converge preview is one round trip');
    const act = await costOn(fleet.host('charlie'), () =>
      berth('converge', 'charlie', '--yes', '--digest', digestOf(preview.result.stdout)),
    );
    assert.equal(act.result.code, 0, act.result.stderr);
    // One survey, one batch for the directory and both files, one for the start hook.
    const steps = act.result.stdout
      .split('\n')
      .filter((line) => /^(wrote|created|ran|minted|restored)\b/.test(line)).length;
    assert.equal(steps, 4, act.result.stdout);
    assert.equal(act.sessions, 3, `${act.sessions} sessions for ${steps} steps`);
    const stat = await on(
      'charlie',
      'stat -c "%a %U %n" /etc/berth-test/notes/token /etc/berth-test/notes/notes.conf /var/lib/berth-test/notes',
    );
    assert.deepEqual(stat.trim().split('\n'), [
      '600 root /etc/berth-test/notes/token',
      '640 root /etc/berth-test/notes/notes.conf',
      '755 root /var/lib/berth-test/notes',
    ]);
    const token = await on('charlie', 'cat /etc/berth-test/notes/token');
    assert.equal((await vaultValues(world))['charlie/notes/token'], token);
    assert.equal(
      await on('charlie', 'cat /etc/berth-test/notes/notes.conf'),
      `name = notes\ntoken = ${token}\n`,
    );
    assert.equal(await on('charlie', 'cat /var/lib/berth-test/notes.started'), 'charlie notes /\n');
    process.stdout.write(
      `# converge act on charlie: ${act.sessions} sshd sessions for ${steps} steps\n`,
    );
  });

  it('unassigns and releases on converge: the stop hook runs there', { skip }, async () => {
    assert.equal((await berth('unassign', 'charlie', 'notes')).code, 0);
    const release = await converge('charlie');
    assert.equal(release.code, 0, release.stderr);
    assert.match(release.stdout, /ran stop of notes/);
    assert.equal(
      (await fleet.host('charlie').exec('test -e /var/lib/berth-test/notes.started')).code,
      1,
    );
    const managed = (await world.readState()).managed as Record<string, Record<string, unknown>>;
    assert.equal(managed.charlie?.notes, undefined);
  });

  it('works on the sudo host through sudo -n, files root-owned; a sudo asking a password refuses the adopt in words', {
    skip,
  }, async () => {
    const adopt = await costOn(fleet.host('bravo'), () => berth('adopt', 'bravo'));
    assert.equal(adopt.result.code, 0, adopt.result.stderr);
    assert.equal(adopt.sessions, 1);
    assert.equal((await berth('assign', 'bravo', 'notes')).code, 0);
    const act = await converge('bravo');
    assert.equal(act.code, 0, act.stderr);
    assert.equal(
      (await on('bravo', 'stat -c "%a %U:%G" /etc/berth-test/notes/token')).trim(),
      '600 root:root',
    );
    assert.equal(await on('bravo', 'cat /var/lib/berth-test/notes.started'), 'bravo notes /\n');
    await fleet.requirePassword('bravo');
    try {
      const refused = await berth('adopt', 'bravo');
      assert.notEqual(refused.code, 0);
      assert.match(
        refused.stderr,
        /bravo: sudo asks for a password for berthdeploy; berth runs sudo -n: allow berthdeploy to run sudo without a password \(a NOPASSWD rule\) or log in as root/,
      );
    } finally {
      await fleet.requirePassword('bravo', false);
    }
  });

  it('refuses a changed host key with ssh words and what to do', { skip }, async () => {
    await exitMasters(); // A live ControlMaster would not look at the new key.
    await fleet.rekey('charlie');
    try {
      const refused = await berth('adopt', 'charlie');
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /REMOTE HOST IDENTIFICATION HAS CHANGED/);
      assert.match(refused.stderr, /ssh-keygen -R 'charlie'/);
    } finally {
      await fleet.rekey('charlie', { trust: true });
    }
    assert.equal((await berth('adopt', 'charlie')).code, 0);
  });

  it('stops a start hook on the far side when berth gets Ctrl-C', { skip }, async () => {
    await world.writeModule('sleeper', moduleAt('sleeper', 'sleep 300'));
    assert.equal((await berth('assign', 'alpha', 'sleeper')).code, 0);
    const preview = await berth('converge', 'alpha', '--filter', 'sleeper');
    assert.equal(preview.code, 0, preview.stderr);
    const { SSH_AUTH_SOCK: _, ...rest } = process.env;
    const child = spawn(
      process.execPath,
      [
        BERTH,
        '--state',
        world.state,
        'converge',
        'alpha',
        '--filter',
        'sleeper',
        '--yes',
        '--digest',
        digestOf(preview.stdout),
      ],
      { env: { ...rest, XDG_RUNTIME_DIR: runtime }, stdio: 'ignore' },
    );
    const ended = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    const sleeping = async () =>
      (await fleet.host('alpha').exec('pgrep -x -f "sleep 300"')).code === 0;
    await until(sleeping, 'the hook started');
    child.kill('SIGINT');
    const code = await ended;
    assert.notEqual(code, 0);
    await until(async () => !(await sleeping()), 'sleep 300 is gone from alpha');
    assert.equal((await berth('unassign', 'alpha', 'sleeper')).code, 0);
  });

  it('stops a check that never answers at its timeout, on the far side: the preview says so, and the lock is let go', {
    skip,
    timeout: 90_000,
  }, async () => {
    // Seconds no other test sleeps: what pgrep finds on alpha is this check's.
    const long = 50_000 + (process.pid % 9_000) * 2;
    await world.writeModule('stuck', {
      ...moduleAt('stuck'),
      check: `echo asking; trap '' TERM; sleep ${long} & sleep ${long + 1}`,
      timeout: '2s',
    });
    assert.equal((await berth('assign', 'alpha', 'stuck')).code, 0);
    assert.equal((await converge('alpha', '--filter', 'stuck')).code, 0);
    const began = performance.now();
    const preview = berth('converge', 'alpha', '--filter', 'stuck');
    // The bracket keeps pgrep from finding the shell that runs it.
    const checking = async () =>
      (await fleet.host('alpha').exec(`pgrep -f "slee[p] ${long}"`)).code === 0;
    await until(checking, 'the check runs on alpha');
    // Another command waits on alpha's lock meanwhile.
    const waiting = berth('assign', 'alpha', 'pad9', '--lock-timeout', '20s');
    const shown = await preview;
    const took = performance.now() - began;
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /start stuck: its check did not answer within its timeout of 2s, so berth stopped it and all it started \(its last line: asking\)/,
    );
    assert.ok(took < 15_000, `the preview took ${took} ms`);
    const assigned = await waiting;
    assert.equal(assigned.code, 0, assigned.stderr);
    await until(async () => !(await checking()), 'nothing of the check is left on alpha');
    assert.equal((await berth('unassign', 'alpha', 'pad9')).code, 0);
    assert.equal((await berth('unassign', 'alpha', 'stuck')).code, 0);
    assert.equal((await converge('alpha', '--filter', 'stuck')).code, 0);
  });

  it('never puts a minted secret on a command line, here or on the host', { skip }, async () => {
    await world.writeModule('minty', moduleAt('minty'));
    assert.equal((await berth('assign', 'charlie', 'minty')).code, 0);
    const seen = new Set<string>();
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const far = await fleet.host('charlie').exec('ps -eo args');
        for (const line of far.stdout.split('\n')) seen.add(line);
        const near = spawn('ps', ['-eo', 'args'], { stdio: ['ignore', 'pipe', 'ignore'] });
        let text = '';
        near.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        await new Promise((done) => near.on('close', done));
        for (const line of text.split('\n')) seen.add(line);
      }
    })();
    const act = await converge('charlie', '--filter', 'minty');
    polling = false;
    await poll;
    assert.equal(act.code, 0, act.stderr);
    const token = await on('charlie', 'cat /etc/berth-test/minty/token');
    assert.ok(token.length >= 16);
    assert.ok(seen.size > 10, 'the poll saw processes');
    // As it is, and as the write ships it (base64, in a here-document on ssh's stdin).
    const shipped = Buffer.from(token).toString('base64').slice(0, 24);
    for (const line of seen) {
      assert.ok(!line.includes(token), `the secret on a command line: ${line}`);
      assert.ok(!line.includes(shipped), `the secret, base64, on a command line: ${line}`);
    }
  });

  it('runs twenty converges over ssh at once, seven or six nodes a host, none lost', {
    skip,
  }, async () => {
    const definitions: Record<string, unknown> = {};
    for (const { module } of MANY) {
      definitions[module] = moduleAt(
        module,
        `sleep 2; echo "$BERTH_NODE" > /var/lib/berth-test/${module}.started`,
      );
    }
    for (const [name, definition] of Object.entries(definitions))
      await world.writeModule(name, definition);
    for (const { node, module } of MANY)
      assert.equal((await berth('assign', node, module)).code, 0);
    const digests = await Promise.all(
      MANY.map(async ({ node }) => {
        const preview = await berth('converge', node);
        assert.equal(preview.code, 0, preview.stderr);
        return digestOf(preview.stdout);
      }),
    );
    const started = performance.now();
    const acts = await Promise.all(
      MANY.map(({ node }, index) =>
        berth('converge', node, '--yes', '--digest', digests[index] as string),
      ),
    );
    const wall = performance.now() - started;
    for (const [index, act] of acts.entries()) {
      assert.equal(act.code, 0, `${MANY[index]?.node}: ${act.stderr}`);
      assert.match(act.stdout, /is as assigned/);
    }
    const managed = (await world.readState()).managed as Record<string, Record<string, unknown>>;
    for (const { node, host, module } of MANY) {
      assert.ok(managed[node]?.[module], `${node} manages ${module}`);
      assert.equal(await on(host, `cat /var/lib/berth-test/${module}.started`), `${node}\n`);
      const token = await on(host, `cat /etc/berth-test/${module}/token`);
      assert.equal((await vaultValues(world))[`${node}/${module}/token`], token);
    }
    process.stdout.write(`# twenty converges over ssh at once: ${Math.round(wall)} ms\n`);
  });
});
