import { readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { exitMasters, type Fleet, fleetUnavailable, startFleet } from '../../tests/fleet/fleet.ts';
import { APP, ansibleAvailable, ansibleProject } from './ansible.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, table, timeNode } from './stats.ts';

const digestOf = (said: string) => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

/** A state directory whose inventory is `hosts` and whose berth.json runs `app` on @all. */
async function stateFor(dir: string, fleet: Fleet, hosts: Fleet['hosts']) {
  const state = join(dir, 'state');
  const runtime = join(dir, 'run');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(runtime);
  await copyFile(fleet.sshConfig, join(state, 'ssh_config'));
  const nodes = Object.fromEntries(
    hosts.map((host) => [host.name, { ssh: host.name, ...(host.sudo ? { sudo: true } : {}) }]),
  );
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({ nodes, run: { '@all': ['app'] }, sshConfig: 'ssh_config' }),
  );
  await writeFile(join(state, 'modules', 'app.json'), JSON.stringify(APP));
  const env = cleanEnv({ XDG_RUNTIME_DIR: runtime });
  delete env.SSH_AUTH_SOCK;
  const berth = async (...args: string[]) => {
    const run = await timeNode([BERTH, '--state', state, ...args], {
      env,
      usage: true,
      timeoutMs: 300_000,
    });
    if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
    return run;
  };
  /** `berth converge @all` as an operator runs it: the preview, then the act on its digest. */
  const converge = async () => {
    const preview = await berth('converge', '@all');
    const act = await berth(
      'converge',
      '@all',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
      '--parallel',
      String(hosts.length),
    );
    if (!/(\d+) of \1 nodes done$/m.test(act.stdout) && hosts.length > 1)
      throw new Error(`berth converge @all did not finish every node: ${act.stdout.slice(-400)}`);
    return { ms: preview.ms + act.ms, rssMiB: Math.max(preview.rssMiB ?? 0, act.rssMiB ?? 0) };
  };
  /** What a first run meets: nothing recorded, so every secret is minted anew. */
  const forget = () => rm(join(state, 'nodes'), { recursive: true, force: true });
  return { converge, forget, runtime };
}

/** The kernel's clock ticks a second, in which /proc gives CPU time. */
const TICKS = 100;

/**
 * CPU seconds the fleet's hosts have spent: each host's sshd listener, with every process
 * under it that has ended (a connection's sshd, its sessions' shells, the programs berth's
 * scripts ran, the hooks), which the kernel adds to the waiting parent. A session still
 * open is not counted until its connection ends: read it with the masters exited.
 */
function hostsCpuSeconds(fleetDir: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('sshd: ') || !title.includes(fleetDir) || !title.includes('[listener]'))
        continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Past `pid (comm) `: field 3 is at 0, so utime, stime, cutime and cstime at 11 to 14.
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      for (const at of [11, 12, 13, 14]) ticks += Number(fields[at]);
    } catch {
      // A process that ended while it was read.
    }
  }
  return ticks / TICKS;
}

/**
 * Fifty hosts (and one more for the one-alone baseline); each round begins from hosts
 * that hold nothing of the work and connections that are cold, for berth and Ansible
 * alike, then runs each again with nothing to change.
 */
export async function benchTargetsOverSsh(hosts: number, rounds: number): Promise<string> {
  const unavailable = fleetUnavailable();
  if (unavailable) return `Targets over ssh: not measured: ${unavailable}`;
  const noAnsible = ansibleAvailable();
  log(`targets-ssh: starting ${hosts + 1} ssh hosts`);
  const fleet = await startFleet({
    hosts: hosts + 1,
    sshdOptions: ['MaxSessions 30', 'MaxStartups 100'],
  });
  const dir = await mkdtemp('/tmp/bts-');
  const masters: string[] = [];
  try {
    const [solo, ...many] = fleet.hosts as [Fleet['hosts'][0], ...Fleet['hosts']];
    const one = await stateFor(join(dir, 'one'), fleet, [solo]);
    const all = await stateFor(join(dir, 'all'), fleet, many);
    masters.push(one.runtime, all.runtime);
    const ansible = noAnsible
      ? undefined
      : await ansibleProject({
          dir: join(dir, 'ansible'),
          hosts: many.map((host) => host.name),
          sudo: many.filter((host) => host.sudo).map((host) => host.name),
          sshConfig: fleet.sshConfig,
          forks: hosts,
        });
    if (ansible) masters.push(ansible.controlDir);
    /** The hosts' own CPU for a first run and its no-change re-run, each round. */
    const hostsCpu = { one: [] as number[], all: [] as number[] };
    const samples = {
      one: { first: [] as number[], again: [] as number[] },
      all: { first: [] as number[], again: [] as number[] },
      ansible: { first: [] as number[], again: [] as number[] },
    };
    let rssMiB = 0;
    /** Both start hooks' marks on the last host, read after Ansible's round. */
    let started: Awaited<ReturnType<Fleet['hosts'][0]['exec']>> | undefined;
    for (let round = 0; round < rounds; round++) {
      log(`targets-ssh: round ${round + 1} of ${rounds}`);
      await Promise.all(
        fleet.hosts.map((host) => host.exec('rm -rf /etc/berth-test /var/lib/berth-test')),
      );
      await rm(join(dir, 'ansible', 'creds'), { recursive: true, force: true });
      for (const masterDir of masters) await exitMasters(masterDir);
      await one.forget();
      await all.forget();
      let cpuBefore = hostsCpuSeconds(fleet.dir);
      samples.one.first.push((await one.converge()).ms);
      samples.one.again.push((await one.converge()).ms);
      await exitMasters(one.runtime);
      hostsCpu.one.push(hostsCpuSeconds(fleet.dir) - cpuBefore);
      cpuBefore = hostsCpuSeconds(fleet.dir);
      const first = await all.converge();
      const again = await all.converge();
      await exitMasters(all.runtime);
      hostsCpu.all.push(hostsCpuSeconds(fleet.dir) - cpuBefore);
      samples.all.first.push(first.ms);
      samples.all.again.push(again.ms);
      rssMiB = Math.max(rssMiB, first.rssMiB, again.rssMiB);
      // Ansible's runs take minutes at fifty hosts: one round of them, against a 0.05× bound.
      if (ansible && round === 0) {
        samples.ansible.first.push(await ansible.run());
        samples.ansible.again.push(await ansible.run());
        started = await fleet.hosts[hosts]?.exec(
          'ls /var/lib/berth-test/app.started /var/lib/berth-test/ans.started',
        );
      }
    }
    const row = (run: 'first' | 'again') => {
      const base = median(samples.one[run]);
      const fifty = median(samples.all[run]);
      const theirs = median(samples.ansible[run]);
      return [
        run === 'first' ? 'first run' : 'no change',
        fmt(base),
        fmt(fifty),
        ratio(fifty / base),
        ansible ? fmt(theirs) : '—',
        ansible ? ratio(fifty / theirs) : '—',
      ];
    };
    return [
      `Targets over ssh: berth converge @all (preview and act, --parallel ${hosts}) over ${hosts} namespace hosts in one process, against one host alone (goal ≤ 2×), and against an Ansible playbook of the same work over the same ${hosts} (Debian ansible, pipelining, ControlPersist, forks ${hosts}; goal ≤ 0.05×); ten files with secrets, two data directories, a start hook each; each round from hosts that hold nothing and cold connections; berth the median of ${rounds} rounds, Ansible its first round`,
      '',
      table(
        [
          'run',
          'one host, ms',
          `@all (${hosts} hosts), ms`,
          'against one host',
          'Ansible, ms',
          'berth ÷ Ansible',
        ],
        [row('first'), row('again')],
      ),
      '',
      `berth's peak RSS over the ${hosts} hosts: ${fmt(rssMiB)} MiB`,
      hostsFloor(hostsCpu, samples.one, hosts),
      ansible
        ? `on the last host, both started: ${started?.stdout.trim().split('\n').length === 2 ? 'yes' : `no (${started?.stderr.trim()})`}`
        : `Ansible: not measured: ${noAnsible}`,
    ].join('\n');
  } finally {
    for (const masterDir of masters) {
      await exitMasters(masterDir);
      await rm(masterDir, { recursive: true, force: true });
    }
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What the hosts alone cost this machine: in this fixture every host's sshd, shells and
 * programs run on the same cores as berth, which a real fleet's hosts do not. Their CPU
 * for the fifty, spread over every core, is a wall no controller can go under here.
 */
function hostsFloor(
  cpu: { one: number[]; all: number[] },
  one: { first: number[]; again: number[] },
  hosts: number,
): string {
  const cores = availableParallelism();
  const oneWall = (median(one.first) + median(one.again)) / 1000;
  const floor = median(cpu.all) / cores;
  return [
    `the hosts' own CPU (their sshd, shells and the programs berth's scripts ran), a first run and its re-run together: one host ${fmt(median(cpu.one), 2)} s, the ${hosts} ${fmt(median(cpu.all), 1)} s;`,
    `on this machine's ${cores} cores the ${hosts} hosts' share alone takes at least ${fmt(floor, 1)} s of wall, ${ratio(floor / oneWall)} one host's whole first run and re-run (${fmt(oneWall, 2)} s; bound 2×)`,
  ].join('\n');
}
