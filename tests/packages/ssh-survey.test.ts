/**
 * A module's packages surveyed over ssh, on the fleet's hosts (as root, and through sudo):
 * in the one survey session, the preview names the version apt would install and what
 * the lists do not offer, and changes nothing. The fleet's hosts share this machine's
 * /usr, so nothing is installed here: the install itself is tested on this machine
 * (apt-node.test.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exitMasters, type Fleet, fleetUnavailable, startFleet } from '../fleet/fleet.ts';
import { holdMachineApt } from '../helpers/machine-apt.ts';
import { makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';

/** What the lists offer of hello, or why this cannot run here. */
function helloCandidate(): string | undefined {
  try {
    const policy = execFileSync('apt-cache', ['policy', 'hello'], {
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
    });
    const candidate = /Candidate: (\S+)/.exec(policy)?.[1];
    return candidate === '(none)' ? undefined : candidate;
  } catch {
    return undefined;
  }
}

const CANDIDATE = helloCandidate();
const skip =
  fleetUnavailable() ?? (CANDIDATE === undefined ? 'needs apt, and hello in its lists' : false);

describe("a module's packages over ssh", { skip }, () => {
  let release: (() => Promise<void>) | undefined;
  let fleet: Fleet;
  let world: World;
  let runtime: string;
  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], {
      XDG_RUNTIME_DIR: runtime,
      SSH_AUTH_SOCK: undefined,
    });

  before(async () => {
    release = await holdMachineApt();
    fleet = await startFleet({ hosts: 2 });
    runtime = await mkdtemp('/tmp/bfr-');
    world = await makeWorld({
      greet: {
        packages: ['hello', { name: 'hello-traditional', version: '9.9-9' }],
        files: { '/etc/berth-test/greeting': { content: 'hi\n' } },
      },
    });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      sshConfig: 'ssh_config',
    });
    for (const node of ['alpha', 'bravo']) await berth('assign', node, 'greet');
  });
  after(async () => {
    if (runtime) await exitMasters(join(runtime, 'berth-ssh'));
    await fleet?.stop();
    await world?.cleanup();
    if (runtime) await rm(runtime, { recursive: true, force: true });
    await release?.();
  });

  for (const node of ['alpha', 'bravo']) {
    it(`${node}: the preview names the candidate and what the lists lack, in one session`, async () => {
      const host = fleet.host(node);
      // The hosts' package database is this machine's, as it was when the fleet started.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format
      const status = "dpkg-query -W -f='${db:Status-Status}' hello 2>/dev/null";
      const had = (await host.exec(status)).stdout;
      const before = await host.sessionsOpened();
      const preview = await berth('converge', node);
      assert.equal(preview.code, 0, preview.stderr);
      assert.equal(await host.sessionsOpened(), before + 1, 'one survey session');
      const install = `\n  install package hello ${CANDIDATE}\n`;
      if (had === 'installed') assert.ok(!preview.stdout.includes(install), preview.stdout);
      else assert.ok(preview.stdout.includes(install), preview.stdout);
      assert.match(
        preview.stdout,
        new RegExp(
          `\nblocked: hello-traditional 9\\.9-9 is not in ${node}'s package lists \\(they offer [^)]+\\); refresh them with berth converge ${node} --refresh\n`,
        ),
      );
      assert.equal((await host.exec(status)).stdout, had, 'nothing installed');
      assert.doesNotMatch((await host.exec('ls /etc/berth-test')).stdout, /greeting/);
    });
  }
});
