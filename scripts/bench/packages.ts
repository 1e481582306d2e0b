// Installing packages over ssh: nginx and redis-server on fresh fleet hosts (each with its own
// /usr, apt pointed at a local repository of real Debian .debs), by berth's converge as an
// operator runs it (the preview, then the act on its digest), against a bare `apt-get
// install` of the same packages over ssh, which is dpkg's and apt's own work and bounds
// every tool, and against Debian's Ansible (its apt module). Each side works hosts of its
// own, made fresh first. `packages`: one host, several rounds; `packages-fleet`: eight hosts
// at once, a first run and the no-change re-run.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildAptRepository } from '../../tests/fleet/apt-repository.ts';
import {
  exitMasters,
  type Fleet,
  type FleetHost,
  fleetUnavailable,
  startFleet,
} from '../../tests/fleet/fleet.ts';
import { ansibleAvailable, ansibleProject } from './ansible.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, ratioSpread, table, timeNode } from './stats.ts';

const PACKAGES = ['nginx', 'redis-server'];

/** What makes a host fresh: this machine's packages, and what they left, purged there. */
const FRESH = [
  'export DEBIAN_FRONTEND=noninteractive',
  'apt-get purge -y -q nginx nginx-common redis-server redis-tools >/dev/null',
  'apt-get autoremove --purge -y -q >/dev/null',
  'rm -rf /var/www/html /etc/nginx /etc/redis /var/lib/redis /var/log/redis',
].join('; ');

/** The same packages through Ansible's apt module. */
const PLAYBOOK = `- hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.apt:
        name: [${PACKAGES.join(', ')}]
        state: present
`;

const BARE = `DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${PACKAGES.join(' ')}`;

/**
 * The same install with no daemon started, as berth installs (it starts a package's daemon
 * only with the module's own start): a policy-rc.d that denies every start, meanwhile.
 */
const BARE_HELD = `printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && ${BARE}; c=$?; rm -f /usr/sbin/policy-rc.d; exit $c`;

/**
 * One host, for `packages`: berth, bare apt-get (daemons started, and held as berth holds
 * them) and Ansible each on a fresh host of its own a round, in an order turned by one each
 * round; each ratio is taken within its round.
 */
export async function benchPackages(rounds: number): Promise<string> {
  const noAnsible = ansibleAvailable();
  const sides = noAnsible ? 3 : 4;
  return withPackageFleet(sides * rounds, async (fleet, hosts, dir, masters) => {
    const took = { berth: [], preview: [], bare: [], held: [], ansible: [] } as Record<
      'berth' | 'preview' | 'bare' | 'held' | 'ansible',
      number[]
    >;
    for (let round = 0; round < rounds; round++) {
      const [mine, bare, held, theirs] = hosts.slice(sides * round, sides * round + sides);
      log(`packages: round ${round + 1} of ${rounds}`);
      const berth = await berthOver(
        join(dir, `berth-${round}`),
        fleet,
        [mine as FleetHost],
        masters,
      );
      const ansible = theirs
        ? await ansibleOver(join(dir, `ansible-${round}`), fleet, [theirs], masters)
        : undefined;
      const turns = [
        async () => {
          const converged = await berth.converge();
          took.berth.push(converged.ms);
          took.preview.push(converged.previewMs);
        },
        async () => took.bare.push(await bareInstall(fleet, [bare as FleetHost], BARE)),
        async () => took.held.push(await bareInstall(fleet, [held as FleetHost], BARE_HELD)),
        ...(ansible ? [async () => took.ansible.push(await ansible.run())] : []),
      ];
      for (let turn = 0; turn < turns.length; turn++)
        await turns[(turn + round) % turns.length]?.();
    }
    const against = (side: keyof typeof took, base: 'bare' | 'held') =>
      ratioSpread(took[side].map((ms, round) => ms / (took[base][round] as number)));
    return [
      `packages: ${PACKAGES.join(' + ')} on a fresh fleet host, from a local repository; median of ${rounds} rounds, each ratio taken within its round, to the bare apt-get install over ssh (goal ≤ 1.15×), and to the same with no daemon started, as berth installs (berth's own share)`,
      '',
      table(
        ['how', 'ms', 'against bare apt-get', 'against apt-get, daemons held'],
        [
          ['bare apt-get install over ssh', fmt(median(took.bare)), ratio(1), ''],
          ['the same, no daemon started', fmt(median(took.held)), '', ratio(1)],
          [
            'berth converge (preview + act)',
            fmt(median(took.berth)),
            against('berth', 'bare'),
            against('berth', 'held'),
          ],
          ['  of which the preview', fmt(median(took.preview)), against('preview', 'bare'), ''],
          noAnsible
            ? ['Ansible', '—', noAnsible, '']
            : ['Ansible (apt module)', fmt(median(took.ansible)), against('ansible', 'bare'), ''],
        ],
      ),
    ].join('\n');
  });
}

/**
 * `count` hosts at once, for `packages-fleet`: berth's `converge @fresh` (preview and act)
 * against Ansible's apt module with forks `count`, each on `count` fresh hosts, then both
 * again with nothing left to do, `rounds` times, each ratio taken within its round; and a
 * bare apt-get on `count` more at once, the work neither can do without. berth's no-change
 * re-run is its preview: when it says nothing is to be done on any node, an operator does
 * not act. The act on its digest is timed all the same and shown beside it.
 */
export async function benchPackagesFleet(count: number, rounds: number): Promise<string> {
  const noAnsible = ansibleAvailable();
  if (noAnsible)
    return `packages-fleet: skipped: Ansible is needed beside berth and ${noAnsible} (apt-get install ansible)`;
  return withPackageFleet(3 * count, async (fleet, hosts, dir, masters) => {
    const [mine, theirs, bare] = [0, 1, 2].map((side) =>
      hosts.slice(side * count, side * count + count),
    ) as [FleetHost[], FleetHost[], FleetHost[]];
    const berth = await berthOver(join(dir, 'berth'), fleet, mine, masters);
    const ansible = await ansibleOver(join(dir, 'ansible'), fleet, theirs, masters);
    log(`packages-fleet: bare apt-get on ${count} hosts at once`);
    const bareMs = await bareInstall(fleet, bare);
    log('packages-fleet: berth, first run');
    const berthFirst = (await berth.converge()).ms;
    log('packages-fleet: Ansible, first run');
    const ansibleFirst = await ansible.run();
    const again = { preview: [] as number[], act: [] as number[], ansible: [] as number[] };
    for (let round = 1; round <= rounds; round++) {
      log(`packages-fleet: berth and Ansible, no change, round ${round} of ${rounds}`);
      const berthAgain = await berth.converge({ unchanged: true });
      again.preview.push(berthAgain.previewMs);
      again.act.push(berthAgain.ms - berthAgain.previewMs);
      again.ansible.push(await ansible.run());
    }
    const ansibleAgain = median(again.ansible);
    const against = (side: 'preview' | 'act' | 'both') =>
      ratioSpread(
        again.ansible.map((ms, round) => {
          const preview = again.preview[round] as number;
          const act = again.act[round] as number;
          return (side === 'preview' ? preview : side === 'act' ? act : preview + act) / ms;
        }),
      );
    const starts = (await berth.start()) + (await berth.start());
    const missing = await notInstalled([...mine, ...theirs]);
    if (missing) throw new Error(missing);
    return [
      `packages-fleet: ${PACKAGES.join(' + ')} on ${count} fresh fleet hosts at once, from a local repository: berth converge @fresh (preview and act) against Ansible's apt module (Debian ansible, pipelining, ControlPersist, forks ${count}, the fleet's ssh config), each on hosts of its own; a bare apt-get install over ssh on ${count} more at once is dpkg's and apt's own work, which bounds both (goal: the first run faster than Ansible's, the no-change re-run ≤ 0.1× Ansible's). The no-change re-run, median of ${rounds} rounds, each ratio taken within its round, the ssh masters of the first runs still there (ControlPersist 60 s for both): berth's is its preview, which says there is nothing to do on any node, so an operator does not act; the act on its digest is shown beside it. berth holds a package's daemon until the module starts it; apt-get and Ansible start nginx and redis-server as they install them`,
      '',
      table(
        [
          'run',
          'bare apt-get, ms',
          'berth, ms',
          'berth ÷ bare',
          'Ansible, ms',
          'Ansible ÷ bare',
          'berth ÷ Ansible',
        ],
        [
          [
            'first',
            fmt(bareMs),
            fmt(berthFirst),
            ratio(berthFirst / bareMs),
            fmt(ansibleFirst),
            ratio(ansibleFirst / bareMs),
            ratio(berthFirst / ansibleFirst),
          ],
          [
            'no change: the preview',
            '—',
            fmt(median(again.preview)),
            '—',
            fmt(ansibleAgain),
            '—',
            against('preview'),
          ],
          ['  beside it, an act', '—', fmt(median(again.act)), '—', '', '—', against('act')],
          [
            '  the preview and an act',
            '—',
            fmt(median(again.preview.map((ms, round) => ms + (again.act[round] as number)))),
            '—',
            '',
            '—',
            against('both'),
          ],
        ],
      ),
      '',
      `two starts of berth alone (berth --version), the floor of a preview and its act: ${fmt(starts)} ms, ${ratio(starts / ansibleAgain)} Ansible's no-change run`,
    ].join('\n');
  });
}

/**
 * Runs `work` on a fleet of `count` fresh hosts (the fleet's sudo host aside) with apt
 * pointed at a local repository of the packages, and a directory of its own; ends them all
 * after, and the ssh masters whose socket directories `work` put in `masters`. What cannot
 * run here is said as the section's line.
 */
async function withPackageFleet(
  count: number,
  work: (fleet: Fleet, hosts: FleetHost[], dir: string, masters: string[]) => Promise<string>,
): Promise<string> {
  const reason = fleetUnavailable();
  if (reason) return `packages: could not be measured: ${reason}`;
  const repository = await buildAptRepository(PACKAGES);
  if (typeof repository !== 'string') return `packages: could not be measured: ${repository.skip}`;
  // One host more: the fleet's second logs in through sudo, not used here.
  const fleet = await startFleet({ hosts: count + 1, ownUsr: true, aptRepository: repository });
  const dir = await mkdtemp('/tmp/bfk-');
  const masters: string[] = [];
  try {
    const hosts = fleet.hosts.filter((host) => !host.sudo);
    // A host's /etc and /var lie over this machine's: apt run here meanwhile (another suite's
    // test) shows through, and apt's own words say so.
    const said = await Promise.all(hosts.map((host) => host.exec(FRESH)));
    const left = await installedOn(hosts);
    if (left.length > 0) {
      const why = said
        .flatMap(({ stderr }) => stderr.split('\n'))
        .find((line) => line.startsWith('E: '));
      throw new Error(`${left.join(', ')} could not be made fresh${why ? ` (${why})` : ''}`);
    }
    return await work(fleet, hosts, dir, masters);
  } finally {
    await Promise.all(masters.map(exitMasters));
    await fleet.stop();
    await Promise.all(masters.map((socketDir) => rm(socketDir, { recursive: true, force: true })));
    await rm(dir, { recursive: true, force: true });
    await rm(repository, { recursive: true, force: true });
  }
}

/** The hosts where any of the packages is installed. */
async function installedOn(hosts: readonly FleetHost[]): Promise<string[]> {
  const said = await Promise.all(
    hosts.map((host) =>
      host.exec(`dpkg-query -W -f='\${db:Status-Status} ' ${PACKAGES.join(' ')} 2>/dev/null`),
    ),
  );
  return hosts
    .filter((_, at) => said[at]?.stdout.split(' ').includes('installed'))
    .map((host) => host.name);
}

/** Why a run did not install the packages everywhere, or undefined. */
async function notInstalled(hosts: readonly FleetHost[]): Promise<string | undefined> {
  const said = await Promise.all(
    hosts.map((host) =>
      host.exec(`dpkg-query -W -f='\${db:Status-Status}\\n' ${PACKAGES.join(' ')} 2>/dev/null`),
    ),
  );
  const lacking = hosts.filter(
    (_, at) => said[at]?.stdout.split('\n').filter((line) => line === 'installed').length !== 2,
  );
  return lacking.length > 0
    ? `the packages are not installed on ${lacking.map((host) => host.name).join(', ')}`
    : undefined;
}

/** `apt-get install` over ssh on every host at once; the wall time until the last is done. */
async function bareInstall(
  fleet: Fleet,
  hosts: readonly FleetHost[],
  script = BARE,
): Promise<number> {
  const started = performance.now();
  await Promise.all(
    hosts.map(async (host) => {
      const installed = await fleet.ssh(host.name, script);
      if (installed.code !== 0)
        throw new Error(`apt-get install on ${host.name}: ${installed.stderr}`);
    }),
  );
  return performance.now() - started;
}

/**
 * berth over `hosts`, in a state directory of its own under `dir`: the group `@fresh` of
 * them, running a module that only names the packages. `converge` is a preview and the
 * act on its digest, as an operator runs them.
 */
async function berthOver(
  dir: string,
  fleet: Fleet,
  hosts: readonly FleetHost[],
  masters: string[],
) {
  const state = join(dir, 'state');
  const runtime = join(dir, 'run');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(runtime);
  masters.push(runtime);
  const names = hosts.map((host) => host.name);
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({
      nodes: Object.fromEntries(names.map((name) => [name, { ssh: name }])),
      groups: { fresh: names },
      run: { '@fresh': ['web'] },
      sshConfig: fleet.sshConfig,
    }),
  );
  await writeFile(join(state, 'modules', 'web.json'), JSON.stringify({ packages: PACKAGES }));
  const env = cleanEnv({ XDG_RUNTIME_DIR: runtime });
  delete env.SSH_AUTH_SOCK;
  const berth = async (...args: string[]) => {
    const timed = await timeNode([BERTH, '--state', state, ...args], { env, timeoutMs: 600_000 });
    if (timed.code !== 0)
      throw new Error(`berth ${args.join(' ')} failed (${timed.code}): ${timed.stderr.trim()}`);
    return timed;
  };
  return {
    /** What starting berth costs, nothing else: `berth --version`. */
    start: async () => (await berth('--version')).ms,
    /** With `unchanged`, the preview must say there is nothing to do on every node. */
    async converge({ unchanged = false } = {}) {
      const preview = await berth('converge', '@fresh');
      const idle = preview.stdout.match(/^\S+ is as assigned: nothing to do\b/gm)?.length ?? 0;
      if (unchanged && idle !== hosts.length)
        throw new Error(
          `berth converge @fresh had something to do on a re-run: ${preview.stdout.slice(-400)}`,
        );
      const digest = /digest ([0-9a-f]{64})\s*$/.exec(preview.stdout)?.[1] ?? '';
      const act = await berth(
        '--lock-timeout',
        '1m',
        'converge',
        '@fresh',
        '--yes',
        '--digest',
        digest,
      );
      if (hosts.length > 1 && !/(\d+) of \1 nodes done$/m.test(act.stdout))
        throw new Error(
          `berth converge @fresh did not finish every node: ${act.stdout.slice(-400)}`,
        );
      return { previewMs: preview.ms, ms: preview.ms + act.ms };
    },
  };
}

/** Ansible's apt module over `hosts`, all at once (forks as many); a project in `dir`. */
async function ansibleOver(
  dir: string,
  fleet: Fleet,
  hosts: readonly FleetHost[],
  masters: string[],
) {
  const project = await ansibleProject({
    dir,
    hosts: hosts.map((host) => host.name),
    sudo: [],
    sshConfig: fleet.sshConfig,
    forks: hosts.length,
    playbook: PLAYBOOK,
  });
  masters.push(project.controlDir);
  return project;
}
