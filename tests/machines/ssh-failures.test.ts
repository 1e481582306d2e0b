/**
 * What only an ssh machine has: round trips (counted in each host's sshd log), the words
 * for every way ssh or the far side refuses, and secrets that never show on a command
 * line or in an environment, here or on the host. Against the test fleet.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MachineError } from '../../src/machines/machine.ts';
import {
  type SshMachine,
  type SshMachineOptions,
  sshMachine,
} from '../../src/machines/ssh-machine.ts';
import { startDelayProxy } from '../fleet/delay-proxy.ts';
import { type Fleet, fleetUnavailable, SUDO_USER, startFleet } from '../fleet/fleet.ts';
import { makeDirectory, write } from './contract.ts';

const bytesOf = (text: string) => new TextEncoder().encode(text);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

/** Rejects with a MachineError of that failure whose words match every pattern. */
function refusedAs(failure: MachineError['failure'], ...patterns: RegExp[]) {
  return (error: unknown) => {
    assert.ok(error instanceof MachineError, `a MachineError, not ${String(error)}`);
    assert.equal(error.failure, failure, error.message);
    for (const pattern of patterns) assert.match(error.message, pattern);
    return true;
  };
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('an ssh machine on the fleet', () => {
  let fleet: Fleet;
  let runtimeDir: string;
  const made: SshMachine[] = [];
  const cleanups: (() => Promise<unknown> | unknown)[] = [];

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 3 });
    runtimeDir = await mkdtemp(join(tmpdir(), 'berth-ssh-test-'));
  });
  after(async () => {
    if (skip) return;
    await Promise.all(made.map((machine) => machine.exit()));
    for (const cleanup of cleanups.reverse()) await cleanup();
    await fleet?.stop();
    if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
  });

  /** An ssh machine on a fleet host; every one made is `exit`ed at the end. */
  const machineOn = (name: string, options: Partial<SshMachineOptions> = {}) => {
    const host = fleet.host(name);
    const machine = sshMachine({
      node: name,
      destination: name,
      runtimeDir,
      sshConfig: fleet.sshConfig,
      sudo: host.sudo,
      ...options,
    });
    made.push(machine);
    return machine;
  };

  /** A runtime directory of its own: no ControlMaster of another test to ride on. */
  const freshRuntime = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-ssh-test-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  /**
   * An ssh machine on charlie that logs in as a new user whose login shell (`shell`)
   * runs with only `path` on its PATH, after `setUp`: how a test stands up a far side
   * that lacks a program, or counts the ones it runs.
   */
  const loginWithPath = async (user: string, path: string, shell: string, setUp = 'true') => {
    const made = await fleet
      .host('charlie')
      .exec(
        [
          setUp,
          `printf '#!${shell}\\nPATH=${path}; export PATH\\nexec ${shell} "$@"\\n' > /usr/local/bin/${user}-shell`,
          `chmod 0755 /usr/local/bin/${user}-shell`,
          `useradd --no-create-home --shell /usr/local/bin/${user}-shell --password "*" ${user}`,
        ].join(' && '),
      );
    assert.equal(made.code, 0, made.stderr);
    // The fleet authorizes a login by a file a user under the host's dir (sshd_config).
    const key = await readFile(`${fleet.identityFile}.pub`, 'utf8');
    await writeFile(join(fleet.dir, 'hosts', 'charlie', 'authorized_keys', user), key);
    return machineOn('charlie', { destination: `${user}@charlie`, sudo: false });
  };

  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const begun = performance.now();
    const value = await work();
    return [value, performance.now() - begun];
  };

  describe('round trips', () => {
    it('a survey of forty paths, twenty of them read, is one session, and all share one connection', {
      skip,
    }, async (t) => {
      const alpha = fleet.host('alpha');
      await alpha.exec(
        'mkdir -p /srv/trips && for i in $(seq 1 20); do echo "file $i" > /srv/trips/f$i; done',
      );
      const machine = machineOn('alpha');
      const connections = await alpha.connectionsAccepted();
      const [, first] = await timed(() => machine.survey([]));
      const paths = Array.from({ length: 40 }, (_, index) =>
        index < 20
          ? { path: `/srv/trips/f${index + 1}`, read: true }
          : { path: `/srv/trips/m${index}` },
      );
      const sessions = await alpha.sessionsOpened();
      const survey = await machine.survey(paths);
      assert.equal(await alpha.sessionsOpened(), sessions + 1, 'one session for forty paths');
      assert.equal(survey.size, 40);

      const empties: number[] = [];
      const forties: number[] = [];
      for (let round = 0; round < 7; round++) {
        empties.push((await timed(() => machine.survey([])))[1]);
        forties.push((await timed(() => machine.survey(paths)))[1]);
      }
      assert.equal(await alpha.sessionsOpened(), sessions + 1 + 14);
      assert.equal(await alpha.connectionsAccepted(), connections + 1, 'one connection for all');
      t.diagnostic(
        `first call (connects) ${first.toFixed(0)} ms; warm survey of 0 paths ${median(empties).toFixed(0)} ms, of 40 (20 read) ${median(forties).toFixed(0)} ms (medians of 7)`,
      );
    });

    it('a batch of changes is one session, whatever their number; a hook is one; stopping a hook is one more', {
      skip,
    }, async () => {
      const alpha = fleet.host('alpha');
      const machine = machineOn('alpha');
      await machine.survey([]);
      let sessions = await alpha.sessionsOpened();
      await write(machine, '/srv/trips/new/app.conf', bytesOf('a=1\n'), {
        mode: 0o640,
        uid: 1,
        gid: 1,
      });
      assert.equal(await alpha.sessionsOpened(), sessions + 1, 'a write');
      sessions += 1;
      await makeDirectory(machine, '/srv/trips/made');
      assert.equal(await alpha.sessionsOpened(), sessions + 1, 'a directory');
      sessions += 1;
      // What a converge of a module with two data directories and ten secret files makes.
      const applied = await machine.apply([
        { kind: 'directory', path: '/srv/trips/app/data1' },
        { kind: 'directory', path: '/srv/trips/app/data2', options: { mode: 0o750 } },
        ...Array.from({ length: 10 }, (_, index) => ({
          kind: 'file' as const,
          path: `/srv/trips/app/s${index + 1}`,
          data: bytesOf(`secret ${index + 1}`),
          options: { mode: 0o600 },
        })),
      ]);
      assert.deepEqual(applied, { done: 12 });
      assert.equal(await alpha.sessionsOpened(), sessions + 1, 'twelve changes');
      assert.equal((await alpha.exec('cat /srv/trips/app/s10')).stdout, 'secret 10');
      sessions += 1;
      const result = await machine.run('echo hooked; exit 4', { BERTH_NODE: 'alpha' });
      assert.deepEqual(result, { code: 4, output: 'hooked' });
      assert.equal(await alpha.sessionsOpened(), sessions + 1, 'a hook');
      sessions += 1;
      const stop = new AbortController();
      const stopped = await machine.run(
        'echo up; sleep 300',
        {},
        {
          signal: stop.signal,
          output: (text) => text.includes('up') && stop.abort(),
        },
      );
      assert.match(stopped.output, /stopped by berth$/);
      assert.equal(await alpha.sessionsOpened(), sessions + 2, 'a hook stopped');
    });

    it('over a slow link, forty paths go over one connection, one session each, the script in the command', {
      skip,
    }, async (t) => {
      const alpha = fleet.host('alpha');
      const delayMs = 100;
      const proxy = await startDelayProxy({ host: alpha.address, port: alpha.port, delayMs });
      cleanups.push(() => proxy.close());
      const config = join(fleet.dir, 'ssh_config_slow');
      await writeFile(
        config,
        `Host alpha-slow\n  HostName ${proxy.host}\n  HostKeyAlias alpha\n  User root\n${await readFile(fleet.sshConfig, 'utf8')}`,
      );
      const runtime = await freshRuntime();
      const machine = machineOn('alpha', {
        destination: 'alpha-slow',
        port: proxy.port,
        sshConfig: config,
        runtimeDir: runtime,
      });
      const sessionsBefore = await alpha.sessionsOpened();
      await machine.survey([]);
      const paths = Array.from({ length: 40 }, (_, index) =>
        index < 20
          ? { path: `/srv/trips/f${index + 1}`, read: true }
          : { path: `/srv/trips/m${index}` },
      );
      const none: number[] = [];
      const forty: number[] = [];
      for (let round = 0; round < 3; round++) {
        none.push((await timed(() => machine.survey([])))[1]);
        forty.push((await timed(() => machine.survey(paths)))[1]);
      }
      const rtt = 2 * delayMs;
      t.diagnostic(
        `with ${rtt} ms round trips: survey of 0 paths ${median(none).toFixed(0)} ms, of 40 ${median(forty).toFixed(0)} ms`,
      );
      // The time is the bench's to judge (npm run bench), not a test's on a busy machine:
      // here, what it costs in trips, counted.
      assert.equal(proxy.connections(), 1);
      assert.equal(await alpha.sessionsOpened(), sessionsBefore + 7, 'one session a survey');

      // How the script travels, as the ssh client's arguments show it while the call runs.
      // In the command: sshd lets standard input in only once the command runs, a round
      // trip later. A script too long for one argument goes on standard input all the same.
      const commandOf = async (survey: () => Promise<unknown>) => {
        const seen = new Set<string>();
        const running = survey();
        let done = false;
        void running.finally(() => {
          done = true;
        });
        while (!done) {
          for (const line of sshProcessesUsing(runtime)) if (line.includes(' -- ')) seen.add(line);
          await new Promise((wake) => setTimeout(wake, 5));
        }
        await running;
        return [...seen].map((line) => line.slice(line.indexOf(' -- ') + 4));
      };
      const small = await commandOf(() => machine.survey(paths));
      assert.equal(small.length, 1, small.join('\n'));
      // A quote in the script is an octal escape in the format: \047.
      assert.match(
        small[0] as string,
        /^alpha-slow printf '.*\\nu \d+ \\047\/srv\/trips\/f20\\047\\n.*' \| sh -s $/,
      );
      const long = Array.from({ length: 1_500 }, (_, index) => ({
        path: `/srv/trips/${'long-name-'.repeat(10)}${index}`,
      }));
      let answered: Awaited<ReturnType<SshMachine['survey']>> | undefined;
      const large = await commandOf(async () => {
        answered = await machine.survey(long);
      });
      assert.deepEqual(large, ['alpha-slow sh -s ']);
      assert.equal(answered?.size, 1_500);
      assert.deepEqual(answered?.get(long[1_499]?.path as string), { kind: 'missing' });
      assert.equal(await alpha.sessionsOpened(), sessionsBefore + 9, 'one session a survey');
    });

    it('exit ends the shared connection, leaving no ssh process behind', { skip }, async () => {
      const dir = await freshRuntime();
      const machine = machineOn('alpha', { runtimeDir: dir });
      await machine.survey([]);
      assert.equal(readdirSync(dir).length, 1, 'a ControlMaster socket');
      assert.ok(sshProcessesUsing(dir).length > 0, 'a master runs');
      await machine.exit();
      for (let tries = 0; tries < 50 && sshProcessesUsing(dir).length > 0; tries++) {
        await new Promise((wake) => setTimeout(wake, 100));
      }
      assert.deepEqual(sshProcessesUsing(dir), []);
      assert.deepEqual(readdirSync(dir), []);
      await machine.survey([]); // and the next call connects again
    });
  });

  describe('processes on the far side', () => {
    /** Where the counted login's wrappers log each program they stand for, one a line. */
    const LOG = '/tmp/counted/log';
    /** Paths the stat wrapper removes (or makes directories) before a stat of many paths. */
    const VANISH = '/tmp/counted/vanish';
    const BECOME = '/tmp/counted/become-directory';
    let counted: SshMachine;

    before(async () => {
      if (skip) return;
      // A login whose PATH starts with wrappers of stat, getent and base64 that log each
      // call on the host, then run the real program.
      const wrapper = (name: string, before = '') =>
        `printf '#!/bin/sh\\necho ${name} >> ${LOG}\\n${before}exec /usr/bin/${name} "$@"\\n' > /usr/local/lib/counted/${name} && chmod 0755 /usr/local/lib/counted/${name}`;
      counted = await loginWithPath(
        'counted',
        '/usr/local/lib/counted:/usr/bin:/bin',
        '/bin/sh',
        [
          'mkdir -p /usr/local/lib/counted && mkdir -p -m 1777 /tmp/counted',
          wrapper(
            'stat',
            `if [ $# -gt 5 ]; then [ ! -f ${VANISH} ] || rm -f -- $(cat ${VANISH}); [ ! -f ${BECOME} ] || for d in $(cat ${BECOME}); do rm -f -- "$d"; mkdir -- "$d"; done; rm -f ${VANISH} ${BECOME}; fi\\n`,
          ),
          wrapper('getent'),
          wrapper('base64'),
        ].join(' && '),
      );
    });

    /** The programs the wrappers logged since the last call, counted by name. */
    const calls = async () => {
      const log = await fleet.host('charlie').exec(`cat ${LOG} 2>/dev/null; rm -f ${LOG}`);
      const counts: Record<string, number> = {};
      for (const name of log.stdout.split('\n').filter(Boolean))
        counts[name] = (counts[name] ?? 0) + 1;
      return counts;
    };

    it('a survey of many paths runs one stat, one getent a database, one base64 a file read', {
      skip,
    }, async () => {
      const charlie = fleet.host('charlie');
      const setUp = await charlie.exec(
        'mkdir -p /srv/counted/data /srv/counted/empty && touch /srv/counted/data/a && for i in $(seq 1 10); do echo "secret $i" > /srv/counted/s$i; done && chmod -R a+rX /srv/counted',
      );
      assert.equal(setUp.code, 0, setUp.stderr);
      await counted.survey([]);
      await calls();
      const survey = await counted.survey(
        [
          { path: '/srv/counted/data' },
          { path: '/srv/counted/empty' },
          ...Array.from({ length: 10 }, (_, index) => ({
            path: `/srv/counted/s${index + 1}`,
            read: true,
          })),
          { path: '/srv/counted/none' },
          { path: '/srv/counted/none/deeper', read: true },
          { path: '/srv/counted/s1/under' },
        ],
        { users: ['root', 'nobody', 'berth-no-such-user'], groups: ['root', 'nogroup'] },
      );
      // A name it does not know sends getent back to asking that database's names one by one.
      assert.deepEqual(await calls(), { stat: 1, getent: 1 + 3 + 1, base64: 10 });
      assert.equal(survey.size, 15);
      assert.equal(survey.get('/srv/counted/data')?.kind, 'directory');
      assert.equal((survey.get('/srv/counted/empty') as { empty: boolean }).empty, true);
      for (let index = 0; index < 10; index++) {
        const facts = survey.get(`/srv/counted/s${index + 1}`);
        assert.ok(facts?.kind === 'file');
        assert.equal(new TextDecoder().decode(facts.bytes), `secret ${index + 1}\n`);
      }
      for (const path of ['/srv/counted/none', '/srv/counted/none/deeper', '/srv/counted/s1/under'])
        assert.deepEqual(survey.get(path), { kind: 'missing' });
      assert.deepEqual(survey.accounts, {
        users: new Map([
          ['root', 0],
          ['nobody', 65534],
        ]),
        groups: new Map([
          ['root', 0],
          ['nogroup', 65534],
        ]),
        // Who the login is, read by the shell itself: no program counted above.
        actor: {
          uid: Number((await charlie.exec('id -u counted')).stdout),
          gid: Number((await charlie.exec('id -g counted')).stdout),
        },
      });
      // Names the machine knows all come from one getent a database.
      await counted.survey([], { users: ['root', 'nobody'], groups: ['root', 'nogroup'] });
      assert.deepEqual(await calls(), { getent: 2 });
    });

    it('a path that becomes a directory, or goes away, just before the one stat leaves the others as they are', {
      skip,
    }, async () => {
      const charlie = fleet.host('charlie');
      const setUp = await charlie.exec(
        `mkdir -p /srv/raced && for i in $(seq 1 6); do echo "file $i" > /srv/raced/f$i; done && chmod -R a+rwX /srv/raced && echo /srv/raced/f4 > ${BECOME} && chown counted ${BECOME}`,
      );
      assert.equal(setUp.code, 0, setUp.stderr);
      const paths = Array.from({ length: 6 }, (_, index) => ({
        path: `/srv/raced/f${index + 1}`,
        read: true,
      }));
      const others = (survey: Awaited<ReturnType<SshMachine['survey']>>, indexes: number[]) => {
        for (const index of indexes) {
          const facts = survey.get(`/srv/raced/f${index}`);
          assert.ok(facts?.kind === 'file', `f${index} is a file`);
          assert.equal(new TextDecoder().decode(facts.bytes), `file ${index}\n`);
          assert.equal(facts.size, `file ${index}\n`.length);
        }
      };
      const becameDirectory = await counted.survey(paths);
      assert.deepEqual(becameDirectory.get('/srv/raced/f4'), {
        kind: 'directory',
        empty: true,
        mode: '0755',
        uid: Number((await charlie.exec('id -u counted')).stdout),
        gid: Number((await charlie.exec('id -g counted')).stdout),
      });
      others(becameDirectory, [1, 2, 3, 5, 6]);
      await charlie.exec(`echo /srv/raced/f2 > ${VANISH} && chown counted ${VANISH}`);
      const wentAway = await counted.survey(paths);
      assert.deepEqual(wentAway.get('/srv/raced/f2'), { kind: 'missing' });
      assert.equal(wentAway.get('/srv/raced/f4')?.kind, 'directory');
      others(wentAway, [1, 3, 5, 6]);
    });
  });

  describe('words for every way it can fail, never a hang', () => {
    it('a host whose key is not known: ssh’s words, and ssh-keyscan', { skip }, async () => {
      const known = join(fleet.dir, 'known_hosts_empty');
      const config = join(fleet.dir, 'ssh_config_unknown');
      await writeFile(known, '');
      await writeFile(
        config,
        (await readFile(fleet.sshConfig, 'utf8')).replaceAll(fleet.knownHosts, known),
      );
      const machine = machineOn('alpha', { sshConfig: config, runtimeDir: await freshRuntime() });
      const error = await machine.survey([]).catch((caught) => caught);
      refusedAs(
        'unreachable',
        /^ssh: No ED25519 host key is known for alpha and you have requested strict checking\. Host key verification failed; /,
        /add its key to known_hosts \(ssh-keyscan alpha, checked by hand/,
      )(error);
    });

    it('a host whose key changed: ssh’s words, and ssh-keygen -R', { skip }, async () => {
      await fleet.rekey('charlie');
      cleanups.push(() => fleet.rekey('charlie', { trust: true }));
      const machine = machineOn('charlie', { runtimeDir: await freshRuntime() });
      await assert.rejects(
        machine.survey([]),
        refusedAs(
          'unreachable',
          /^ssh: REMOTE HOST IDENTIFICATION HAS CHANGED: Host key for charlie has changed and you have requested strict checking\. Host key verification failed; /,
          /if the host was reinstalled, remove the old key with ssh-keygen -R 'charlie'/,
        ),
      );
      await fleet.rekey('charlie', { trust: true });
      await machine.survey([]);
    });

    it('a port nothing listens on: connection refused, as ssh says it', { skip }, async () => {
      const alpha = fleet.host('alpha');
      const machine = machineOn('alpha', { port: 1, runtimeDir: await freshRuntime() });
      await assert.rejects(
        write(machine, '/srv/x', bytesOf('x'), { mode: 0o600 }),
        refusedAs(
          'unreachable',
          new RegExp(
            `^ssh: connect to host ${alpha.address.replaceAll('.', '\\.')} port 1: Connection refused; check that sshd runs there`,
          ),
        ),
      );
    });

    it('an address no host answers: a timeout within ConnectTimeout', { skip }, async () => {
      // Routed to alpha, which does not forward: the SYNs are dropped, not refused.
      const alpha = fleet.host('alpha');
      const silent = `${alpha.address.split('.').slice(0, 3).join('.')}.250`;
      const route = spawnSync('ip', ['route', 'add', `${silent}/32`, 'via', alpha.address]);
      assert.equal(route.status, 0, String(route.stderr));
      cleanups.push(() => spawnSync('ip', ['route', 'del', `${silent}/32`]));
      const machine = machineOn('alpha', {
        destination: `root@${silent}`,
        connectTimeout: 2,
        runtimeDir: await freshRuntime(),
      });
      const error = await machine.survey([]).catch((caught) => caught);
      refusedAs(
        'unreachable',
        new RegExp(
          `^ssh: connect to host ${silent.replaceAll('.', '\\.')} port 22: Connection timed out; check that the host is up`,
        ),
      )(error);
    });

    it('a server that never speaks: a timeout within ConnectTimeout too', { skip }, async () => {
      const sockets = new Set<Socket>();
      const mute: Server = createServer((socket) => sockets.add(socket));
      await new Promise<void>((done) => mute.listen(0, '127.0.0.1', done));
      cleanups.push(() => {
        for (const socket of sockets) socket.destroy();
        mute.close();
      });
      const machine = machineOn('alpha', {
        destination: 'root@127.0.0.1',
        port: (mute.address() as { port: number }).port,
        connectTimeout: 2,
        runtimeDir: await freshRuntime(),
      });
      const error = await machine.run('true', {}).catch((caught) => caught);
      refusedAs(
        'unreachable',
        /^ssh: Connection to 127\.0\.0\.1 port \d+ timed out; check that the host is up, the address is right and sshd answers there$/,
      )(error);
    });

    it('a login without an accepted key: ssh’s words, and what to give it', { skip }, async () => {
      const machine = machineOn('alpha', {
        destination: 'nobody@alpha',
        runtimeDir: await freshRuntime(),
      });
      await assert.rejects(
        machine.survey([]),
        refusedAs(
          'unreachable',
          /^ssh: nobody@\S+: Permission denied \(publickey\); berth logs in without prompting \(BatchMode\): give ssh a key/,
        ),
      );
    });

    it('a sudo that asks for a password: berth says so, and what to allow', { skip }, async () => {
      await fleet.requirePassword('bravo');
      cleanups.push(() => fleet.requirePassword('bravo', false));
      const machine = machineOn('bravo');
      const words = `bravo: sudo asks for a password for ${SUDO_USER}; berth runs sudo -n: allow ${SUDO_USER} to run sudo without a password (a NOPASSWD rule) or log in as root`;
      const refused = (error: unknown) => {
        assert.ok(error instanceof MachineError);
        assert.equal(error.failure, 'denied');
        assert.equal(error.message, words);
        return true;
      };
      await assert.rejects(machine.survey([]), refused);
      await assert.rejects(write(machine, '/srv/x', bytesOf('x'), { mode: 0o600 }), refused);
      await assert.rejects(makeDirectory(machine, '/srv/d'), refused);
      await assert.rejects(machine.run('true', {}), refused);
      await fleet.requirePassword('bravo', false);
      assert.equal((await machine.survey([])).size, 0);
    });

    it('a far side without sh: berth says what it needs there', { skip }, async () => {
      // A login whose shell finds no sh on its PATH (every host has one; this is the
      // nearest to a machine without).
      const machine = await loginWithPath('nosh', '/nowhere', '/bin/bash');
      for (const act of [() => machine.survey([]), () => machine.run('true', {})]) {
        await assert.rejects(
          act(),
          refusedAs(
            'unreachable',
            /^the far side has no sh on its PATH \(\S*bash: line 1: sh: command not found\); berth needs a POSIX sh/,
          ),
        );
      }
    });
  });

  it('a far side without setsid: hooks are refused in words, before anything starts', {
    skip,
  }, async () => {
    // A login whose PATH has sh and nothing else.
    const charlie = fleet.host('charlie');
    const machine = await loginWithPath(
      'onlysh',
      '/usr/local/lib/only-sh',
      '/bin/bash',
      'mkdir -p /usr/local/lib/only-sh && ln -sf /bin/sh /usr/local/lib/only-sh/sh',
    );
    await assert.rejects(
      machine.run('touch /tmp/ran', {}),
      refusedAs('failed', /^charlie has no setsid \(util-linux\): berth runs a hook there/),
    );
    assert.notEqual((await charlie.exec('test -e /tmp/ran')).code, 0, 'the hook never ran');
  });

  describe('secrets', () => {
    it('secrets written in batches never show in a command line or an environment, here or on the host', {
      skip,
    }, async () => {
      const bravo = fleet.host('bravo');
      const machine = machineOn('bravo');
      await machine.survey([]);
      const secret = `berth-secret-${randomBytes(12).toString('hex')}`;
      // Big enough that each write takes a while on the far side, in which to look.
      const data = bytesOf(`password=${secret}\n${'x'.repeat(512 * 1024)}\n${secret}\n`);
      const encoded = Buffer.from(data).toString('base64').slice(0, 40);
      await bravo.exec('cat > /tmp/patterns', `${secret}\n${encoded}\n`);
      // On the host: every process's arguments and environment, over and over.
      const watching = bravo.exec(
        [
          'seen=0; leaks=0; i=0',
          'while [ ! -e /tmp/stop-watching ] && [ $i -lt 5000 ]; do',
          '  snap=$(ps -eo args; for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do tr "\\0" " " < "$f"; echo; done 2>/dev/null)',
          '  case $snap in *"sh -s"*) seen=$((seen + 1)) ;; esac',
          '  if printf "%s\\n" "$snap" | grep -F -f /tmp/patterns; then leaks=$((leaks + 1)); fi',
          '  i=$((i + 1))',
          'done',
          'echo "seen $seen leaks $leaks"',
        ].join('\n'),
      );
      // Here: the same, from the root pid namespace (which sees the host's processes too).
      let localLooks = 0;
      const localLeaks: string[] = [];
      let writing = true;
      const lookHere = (async () => {
        while (writing) {
          localLooks++;
          for (const line of processTexts()) {
            if (line.includes(secret) || line.includes(encoded)) localLeaks.push(line);
          }
          await new Promise((wake) => setImmediate(wake));
        }
      })();
      for (let round = 0; round < 8; round += 2) {
        const applied = await machine.apply(
          [round, round + 1].map((file) => ({
            kind: 'file' as const,
            path: `/etc/berth-test/secret-${file}.env`,
            data,
            options: { mode: 0o600 },
          })),
        );
        assert.deepEqual(applied, { done: 2 });
      }
      writing = false;
      await lookHere;
      await bravo.exec('touch /tmp/stop-watching');
      const watched = await watching;
      const [, seen, , leaks] = watched.stdout.trim().split('\n').at(-1)?.split(' ') ?? [];
      assert.equal(leaks, '0', watched.stdout);
      assert.ok(
        Number(seen) > 0,
        `the watch on the host saw berth's sh running: ${watched.stdout}`,
      );
      assert.deepEqual(localLeaks, []);
      assert.ok(localLooks > 0);
      const written = await bravo.exec('cat /etc/berth-test/secret-7.env');
      assert.equal(written.stdout, new TextDecoder().decode(data));
    });
  });
});

/** Every process's arguments and environment, one line each, as this machine sees them. */
function processTexts(): string[] {
  const texts: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    for (const what of ['cmdline', 'environ']) {
      try {
        texts.push(readFileSync(`/proc/${pid}/${what}`).toString('latin1').replaceAll('\0', ' '));
      } catch {
        // Gone already.
      }
    }
  }
  return texts;
}

/** The ssh processes (a ControlMaster among them) whose arguments name `dir`. */
function sshProcessesUsing(dir: string): string[] {
  return processTexts().filter((line) => line.startsWith('ssh') && line.includes(dir));
}
