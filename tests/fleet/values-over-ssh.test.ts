/**
 * Values and facts over ssh, through the real binary, on the fleet's real sshd hosts: every
 * fact read in the survey's one round trip (sshd sessions counted on the host), through
 * sudo too; a value holding shell never run, in a file or a hook; a value changed between
 * a preview and its act refused.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { machine } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type Run, type World } from '../helpers/world.ts';
import {
  berthIn,
  exitMasters,
  FLEET_DOMAIN,
  type Fleet,
  type FleetHost,
  fleetUnavailable,
  onHost,
  SUDO_USER,
  startFleet,
} from './fleet.ts';

/** Every fact in a file, every fact and value in the start's environment. */
const FACTS = {
  description: 'reads every fact',
  values: { site_name: { type: 'string' }, workers: { type: 'integer', default: 2 } },
  files: {
    '/etc/berth-test/facts': {
      content:
        'node={{fact node}}\nhost={{fact host}}\nhostname={{fact hostname}}\nfqdn={{fact fqdn}}\naddress={{fact address}}\ncodename={{fact codename}}\narch={{fact arch}}\nsite={{value site_name}}\nworkers={{value workers}}\n',
    },
  },
  start: 'env | grep "^BERTH_" | sort > /var/lib/berth-test/env',
};

/** What /etc/os-release says on this machine, whose /etc the hosts start from. */
function codenameHere(text: string): string {
  return /^VERSION_CODENAME=(.*)$/m.exec(text)?.[1] ?? '';
}

const skip = fleetUnavailable();

describe('values and facts over ssh, on the fleet', () => {
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const mark = '/var/lib/berth-test/MARK';
  const hostile = `$(touch ${mark})\`touch ${mark}\`'; touch ${mark}; '"; touch ${mark}; "`;

  const berth = (...args: string[]): Promise<Run> => berthIn(world.state, runtime, args);
  const digestOf = (said: string) => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  const sessionsOf = async <T>(host: FleetHost, work: () => Promise<T>) => {
    const before = await host.sessionsOpened();
    const result = await work();
    return { result, sessions: (await host.sessionsOpened()) - before };
  };

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 2 });
    runtime = await mkdtemp('/tmp/bfv-');
    world = await makeWorld({ facts: FACTS });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: `${SUDO_USER}@bravo`, sudo: true } },
      values: { '@all': { site_name: 'example.org' }, bravo: { site_name: hostile } },
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

  it('reads every fact in the one survey of a preview, and writes them; the hook sees them all', {
    skip,
  }, async () => {
    assert.equal((await berth('assign', 'alpha', 'facts')).code, 0);
    const alpha = fleet.host('alpha');
    const preview = await sessionsOf(alpha, () => berth('converge', 'alpha'));
    assert.equal(preview.result.code, 0, preview.result.stderr);
    assert.equal(preview.sessions, 1, 'a converge preview is one round trip, facts and all');
    const act = await berth(
      'converge',
      'alpha',
      '--yes',
      '--digest',
      digestOf(preview.result.stdout),
    );
    assert.equal(act.code, 0, act.stderr);
    const codename = codenameHere(await on('alpha', 'cat /etc/os-release'));
    assert.notEqual(codename, '');
    assert.equal(
      await on('alpha', 'cat /etc/berth-test/facts'),
      `node=alpha\nhost=alpha\nhostname=alpha\nfqdn=alpha.${FLEET_DOMAIN}\naddress=${alpha.address}\ncodename=${codename}\narch=${machine()}\nsite=example.org\nworkers=2\n`,
    );
    assert.deepEqual((await on('alpha', 'cat /var/lib/berth-test/env')).trim().split('\n'), [
      `BERTH_FACT_ADDRESS=${alpha.address}`,
      `BERTH_FACT_ARCH=${machine()}`,
      `BERTH_FACT_CODENAME=${codename}`,
      `BERTH_FACT_FQDN=alpha.${FLEET_DOMAIN}`,
      'BERTH_FACT_HOST=alpha',
      'BERTH_FACT_HOSTNAME=alpha',
      'BERTH_FACT_NODE=alpha',
      'BERTH_MODULE=facts',
      'BERTH_NODE=alpha',
      'BERTH_ROOT=/',
      'BERTH_VALUE_SITE_NAME=example.org',
      'BERTH_VALUE_WORKERS=2',
    ]);
  });

  it('through sudo: the facts of the host, and a value holding $(touch MARK) never runs', {
    skip,
  }, async () => {
    assert.equal((await berth('assign', 'bravo', 'facts')).code, 0);
    const bravo = fleet.host('bravo');
    const preview = await sessionsOf(bravo, () => berth('converge', 'bravo'));
    assert.equal(preview.result.code, 0, preview.result.stderr);
    assert.equal(preview.sessions, 1, 'one round trip through sudo too');
    const act = await berth(
      'converge',
      'bravo',
      '--yes',
      '--digest',
      digestOf(preview.result.stdout),
    );
    assert.equal(act.code, 0, act.stderr);
    const facts = await on('bravo', 'cat /etc/berth-test/facts');
    assert.match(
      facts,
      new RegExp(
        `^host=bravo\\nhostname=bravo\\nfqdn=bravo\\.${FLEET_DOMAIN}\\naddress=${bravo.address.replaceAll('.', '\\.')}\\n`,
        'm',
      ),
    );
    assert.ok(facts.includes(`\nsite=${hostile}\n`), facts);
    assert.ok(
      (await on('bravo', 'cat /var/lib/berth-test/env')).includes(
        `BERTH_VALUE_SITE_NAME=${hostile}\n`,
      ),
    );
    assert.equal((await bravo.exec(`test -e ${mark}`)).code, 1, 'the value ran as shell on bravo');
  });

  it('refuses an act whose value changed since its preview, naming it; nothing is written', {
    skip,
  }, async () => {
    const preview = await berth('converge', 'alpha');
    assert.match(preview.stdout, /nothing to do/, preview.stdout);
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: `${SUDO_USER}@bravo`, sudo: true } },
      values: { '@all': { site_name: 'example.net' }, bravo: { site_name: hostile } },
      sshConfig: 'ssh_config',
    });
    const next = await berth('converge', 'alpha');
    assert.match(
      next.stdout,
      /it differs from what berth writes, in lines that read value site_name\n/,
    );
    const act = await berth('converge', 'alpha', '--yes', '--digest', digestOf(preview.stdout));
    assert.equal(act.code, 1);
    assert.match(act.stderr, /value site_name of facts is now "example\.net", was "example\.org"/);
    assert.match(await on('alpha', 'cat /etc/berth-test/facts'), /\nsite=example\.org\n/);
  });
});
