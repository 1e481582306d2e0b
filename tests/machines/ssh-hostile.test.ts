/**
 * What only the ssh machine's scripts can be raced at (issue 21): a batch stages several
 * files on descriptors and renames them later, walking to each directory again, and makes
 * a data directory by walking to it. On the sudo host (bravo: `sudo -n sh -s` as root), a
 * user who owns the directories renames links to a root-only file onto every temporary
 * name, and swaps the directories for links to a root-only directory, while berth writes
 * a few hundred files. Nothing of root's may change hands, nor be written.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Change } from '../../src/machines/machine.ts';
import { type SshMachine, sshMachine } from '../../src/machines/ssh-machine.ts';
import { type Fleet, fleetUnavailable, startFleet } from '../fleet/fleet.ts';

const RACER = 'berth-racer';
const bytesOf = (text: string) => new TextEncoder().encode(text);
/** The fleet's exec stops a command after a minute: the attacker stops itself before. */
const ATTACK_SECONDS = 50;
const WRITE_MS = 40_000;

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('an ssh machine through sudo, raced by a user who owns the directories', () => {
  let fleet: Fleet;
  let runtimeDir: string;
  let machine: SshMachine;
  let racer = { uid: -1, gid: -1 };

  const on = async (script: string) => {
    const result = await fleet.host('bravo').exec(script);
    assert.equal(result.code, 0, `${script}: ${result.stderr}`);
    return result.stdout;
  };
  /** The racer's own commands, with its own rights, in its directory. */
  const asRacer = (script: string) =>
    on(
      `cd /srv/race/own && setpriv --reuid=${racer.uid} --regid=${racer.gid} --clear-groups sh -c '${script}'`,
    );
  /** All that must not change of the root-only directory and its file. */
  const victim = () =>
    on(
      'stat -c "%F %a %u %g %h %s" /srv/race/victim /srv/race/victim/secret && ls -A /srv/race/victim && cat /srv/race/victim/secret',
    );

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 2 });
    runtimeDir = await mkdtemp(join(tmpdir(), 'berth-ssh-race-'));
    machine = sshMachine({
      node: 'bravo',
      destination: 'bravo',
      runtimeDir,
      sshConfig: fleet.sshConfig,
      sudo: true,
    });
    await on(
      [
        `id -u ${RACER} >/dev/null 2>&1 || useradd --no-create-home --password '*' ${RACER}`,
        'mkdir -p /srv/race/own/conf /srv/race/own/sub /srv/race/own/data /srv/race/victim',
        `chown -R ${RACER}:${RACER} /srv/race/own && chmod 0700 /srv/race/victim`,
        'echo root only > /srv/race/victim/secret && chmod 0600 /srv/race/victim/secret',
      ].join(' && '),
    );
    racer = {
      uid: Number((await on(`id -u ${RACER}`)).trim()),
      gid: Number((await on(`id -g ${RACER}`)).trim()),
    };
  });
  after(async () => {
    if (skip) return;
    await machine?.exit();
    await fleet?.stop();
    if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
  });

  it('a batch of staged files and a data directory, written while the user swaps links onto them: the victim never changes hands', {
    skip,
  }, async () => {
    const before = await victim();
    // The data directory is a link to the victim's directory all along. Until `stop` (or
    // the time is up): a link to the secret renamed onto every temporary name in conf and
    // sub, and conf swapped for a link to the victim's directory for a moment, then back.
    await asRacer('mv -T data data.old && ln -s ../victim data');
    const untilStopped = (loop: string) =>
      asRacer(
        `end=$(($(date +%s) + ${ATTACK_SECONDS})); while [ ! -e stop ] && [ $(date +%s) -lt $end ]; do ${loop}; done; true`,
      );
    const attack = Promise.all([
      untilStopped(
        'for t in conf/.*.tmp sub/.*.tmp; do ln -sfn ../../victim/secret .l && mv -fT .l "$t" 2>/dev/null; done',
      ),
      untilStopped(
        'if mv -T conf held 2>/dev/null; then ln -sfn ../victim .d && mv -fT .d conf 2>/dev/null; rm -f conf; mv -T held conf 2>/dev/null; fi',
      ),
    ]);
    const batch = (round: number): Change[] => {
      const options = { mode: 0o644, uid: racer.uid, gid: racer.gid };
      return [
        { kind: 'file', path: '/srv/race/own/conf/a.ini', data: bytesOf(`a ${round}\n`), options },
        { kind: 'file', path: '/srv/race/own/conf/b.ini', data: bytesOf(`b ${round}\n`), options },
        { kind: 'file', path: '/srv/race/own/sub/c.ini', data: bytesOf(`c ${round}\n`), options },
        { kind: 'directory', path: '/srv/race/own/data', options: { mode: 0o777, ...racer } },
      ];
    };
    let written = 0;
    let rounds = 0;
    const refusals = new Set<string>();
    const started = Date.now();
    try {
      while (Date.now() - started < WRITE_MS && rounds < 200) {
        const applied = await machine.apply(batch(rounds++));
        written += applied.done;
        if (applied.failure) {
          assert.notEqual(applied.failure.failure, 'unreachable', applied.failure.message);
          refusals.add(applied.failure.message.replace(/\d+/g, 'N'));
        }
      }
    } finally {
      await on('touch /srv/race/own/stop');
      await attack;
      await on('rm -f /srv/race/own/stop');
    }
    assert.equal(await victim(), before, 'the victim is as it was');
    assert.ok(written > 0, `some changes went through: ${[...refusals].join('; ')}`);
    // What the race made berth refuse varies with its timing (a link, a swapped directory,
    // a name taken, a directory the user closed): each refusal names the path it stopped at.
    for (const refusal of refusals) assert.match(refusal, /\/srv\/race\/own\/\S/);
  });

  it('a found file read while the user swaps it for a link to the secret never brings the secret', {
    skip,
  }, async () => {
    await on(`echo mine > /srv/race/own/key && chown ${racer.uid} /srv/race/own/key`);
    const attack = asRacer(
      `end=$(($(date +%s) + ${ATTACK_SECONDS})); while [ ! -e stop ] && [ $(date +%s) -lt $end ]; do
        ln -sfn ../victim/secret .k && mv -fT .k key; echo mine > .f && mv -fT .f key
      done; true`,
    );
    const kinds = new Map<string, number>();
    const started = Date.now();
    try {
      for (let round = 0; round < 200 && Date.now() - started < WRITE_MS; round++) {
        const facts = (await machine.survey([{ path: '/srv/race/own/key', read: true }])).get(
          '/srv/race/own/key',
        );
        assert.ok(facts);
        kinds.set(facts.kind, (kinds.get(facts.kind) ?? 0) + 1);
        if (facts.kind === 'file' && facts.bytes)
          assert.equal(new TextDecoder().decode(facts.bytes), 'mine\n');
        if (facts.kind === 'link') assert.equal(facts.owner, RACER);
      }
    } finally {
      await on('touch /srv/race/own/stop');
      await attack;
      await on('rm -f /srv/race/own/stop');
    }
    assert.ok((kinds.get('file') ?? 0) > 0, `the user's own file was read: ${[...kinds]}`);
  });
});
