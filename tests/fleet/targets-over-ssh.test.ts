/**
 * A group converge across the fleet's real sshd hosts, through the real binary: one
 * preview and digest for all, then the act, during which one host's link is cut (its
 * eth0 set down inside its namespace, once its start hook has begun: nothing is refused,
 * packets are simply lost). The silent host is given up within 15 s, in words; the others
 * carry on and are done.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';
import { exitMasters, type Fleet, fleetUnavailable, startFleet } from './fleet.ts';

const HOSTS = ['alpha', 'bravo', 'charlie'];

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('a group converge over ssh with a host cut off mid-act', () => {
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const env = () => ({ XDG_RUNTIME_DIR: runtime, SSH_AUTH_SOCK: undefined });
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], env());

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 3 });
    runtime = await mkdtemp('/tmp/bft-');
    world = await makeWorld({
      web: {
        description: 'a web server whose start takes a while',
        files: { '/etc/berth-test/web.conf': { content: 'listen 80\n' } },
        start:
          'touch /var/lib/berth-test-web.starting; sleep 8; echo up > /var/lib/berth-test-web.started',
      },
      later: {
        description: 'another start that takes a while',
        start: 'touch /var/lib/berth-test-later.starting; sleep 8',
      },
      broken: { description: 'a start that fails', start: 'echo no port >&2; exit 3' },
    });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: {
        alpha: { ssh: 'alpha' },
        bravo: { ssh: 'bravo', sudo: true },
        charlie: { ssh: 'charlie' },
      },
      groups: { edge: HOSTS },
      run: { '@edge': ['web'] },
      sshConfig: 'ssh_config',
    });
  });
  after(async () => {
    if (skip) return;
    if (runtime) await exitMasters(join(runtime, 'berth-ssh'));
    await fleet?.stop();
    await world?.cleanup();
    if (runtime) await rm(runtime, { recursive: true, force: true });
  });

  it('gives the silent host up, in words, and acts on the others', {
    skip,
  }, async () => {
    const preview = await berth('converge', '@edge');
    assert.equal(preview.code, 0, preview.stderr);
    for (const host of HOSTS)
      assert.match(preview.stdout, new RegExp(`^ {2}${host}: install web \\(\\d steps\\)$`, 'm'));

    const acting = berth('converge', '@edge', '--yes', '--digest', digestOf(preview.stdout));
    // Once every host is in its 8 s start hook (however slow this machine is to get them
    // there), charlie's link goes silent.
    for (const host of HOSTS)
      while ((await fleet.host(host).exec('test -e /var/lib/berth-test-web.starting')).code !== 0)
        await new Promise((done) => setTimeout(done, 100));
    const cut = await fleet.host('charlie').exec('ip link set eth0 down');
    assert.equal(cut.code, 0, cut.stderr);
    // Given up by ssh's keepalive (seconds), not TCP's (many minutes): the act ends.
    const act = await acting;

    assert.equal(act.code, 1, act.stdout + act.stderr);
    assert.match(act.stdout, /^ {2}alpha: done in /m, act.stdout + act.stderr);
    assert.match(act.stdout, /^ {2}bravo: done in /m, act.stdout + act.stderr);
    assert.match(
      act.stdout,
      /^ {2}charlie: failed in [\d.]+ s: converge of charlie stopped at web: /m,
    );
    // Cut during a batch, ssh's own words; cut while the hook runs, the hook's connection's.
    assert.match(
      act.stderr,
      /^charlie: converge of charlie stopped at web: (the connection broke while the hook ran: )?ssh: .+/m,
    );
    for (const host of ['alpha', 'bravo']) {
      const started = await fleet.host(host).exec('cat /var/lib/berth-test-web.started');
      assert.equal(started.stdout, 'up\n', host);
    }
    await fleet.host('charlie').exec('ip link set eth0 up');
  });

  it('reports a failing node and a host cut off as values, under --json', {
    skip,
  }, async () => {
    assert.equal((await berth('assign', 'alpha', 'broken')).code, 0);
    assert.equal((await berth('assign', 'charlie', 'later')).code, 0);
    const preview = await berth('converge', '@edge', '--json');
    assert.equal(preview.code, 0, preview.stderr);
    const { digest } = JSON.parse(preview.stdout);

    const acting = berth('converge', '@edge', '--yes', '--digest', digest, '--json');
    while ((await fleet.host('charlie').exec('test -e /var/lib/berth-test-later.starting')).code)
      await new Promise((done) => setTimeout(done, 100));
    const cut = await fleet.host('charlie').exec('ip link set eth0 down');
    assert.equal(cut.code, 0, cut.stderr);
    const act = await acting;
    await fleet.host('charlie').exec('ip link set eth0 up');

    assert.equal(act.code, 1, act.stdout + act.stderr);
    const answer = JSON.parse(act.stdout);
    assert.equal(answer.format_version, 1);
    assert.equal(answer.code, 'nodes_refused', answer.refused);
    const { alpha, bravo, charlie } = answer.nodes;
    assert.deepEqual([alpha.outcome, alpha.code], ['failed', 'hook_failed'], act.stdout);
    assert.deepEqual([bravo.outcome, bravo.code], ['done', undefined], act.stdout);
    assert.equal(charlie.outcome, 'failed', act.stdout);
    assert.equal(charlie.code, 'unreachable', act.stdout);
    for (const node of [alpha, bravo, charlie]) assert.equal(Number.isInteger(node.ms), true);
  });
});
