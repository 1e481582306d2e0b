// Installing packages over ssh: nginx and redis-server on a fresh fleet host (its own /usr,
// apt pointed at a local repository of real Debian .debs), by berth's converge (preview and
// act: the survey's apt-cache policy and simulation, then the install) against a bare
// `apt-get install` of the same packages over ssh, and Debian's Ansible (its apt module)
// when it can be had, each on a host of its own each round.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildAptRepository } from '../../tests/fleet/apt-repository.ts';
import { exitMasters, fleetUnavailable, startFleet } from '../../tests/fleet/fleet.ts';
import { ansibleAvailable } from './ansible.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, table, timeNode } from './stats.ts';

const PACKAGES = ['nginx', 'redis-server'];

/** What makes a host fresh: this machine's packages, and what they left, purged there. */
const FRESH = [
  'export DEBIAN_FRONTEND=noninteractive',
  'apt-get purge -y -q nginx nginx-common redis-server redis-tools >/dev/null',
  'apt-get autoremove --purge -y -q >/dev/null',
  'rm -rf /var/www/html /etc/nginx /etc/redis /var/lib/redis /var/log/redis',
].join('; ');

export async function benchPackages(rounds: number): Promise<string> {
  const reason = fleetUnavailable();
  if (reason) return `packages: could not be measured: ${reason}`;
  const repository = await buildAptRepository(PACKAGES);
  if (typeof repository !== 'string') return `packages: could not be measured: ${repository.skip}`;
  const noAnsible = ansibleAvailable();
  const sides = noAnsible ? 2 : 3;
  // One more host than the rounds need: the fleet's second logs in through sudo, not used here.
  const fleet = await startFleet({
    hosts: sides * rounds + 1,
    ownUsr: true,
    aptRepository: repository,
  });
  const hosts = fleet.hosts.filter((host) => !host.sudo);
  const dir = await mkdtemp('/tmp/bfk-');
  const runtime = join(dir, 'run');
  try {
    await Promise.all(
      hosts.map(async (host) => {
        const done = await host.exec(FRESH);
        const left = await host.exec(
          `dpkg-query -W -f='\${db:Status-Status} ' ${PACKAGES.join(' ')} 2>/dev/null`,
        );
        if (done.code !== 0 || left.stdout.includes('installed'))
          throw new Error(`${host.name} could not be made fresh: ${done.stderr}${left.stdout}`);
      }),
    );
    const state = join(dir, 'state');
    await mkdir(join(state, 'modules'), { recursive: true });
    await mkdir(runtime);
    const nodes = Object.fromEntries(hosts.map((host) => [host.name, { ssh: host.name }]));
    await writeFile(
      join(state, 'berth.json'),
      JSON.stringify({ nodes, sshConfig: fleet.sshConfig }),
    );
    await writeFile(join(state, 'modules', 'web.json'), JSON.stringify({ packages: PACKAGES }));
    const env = { ...cleanEnv({ XDG_RUNTIME_DIR: runtime }) };
    delete env.SSH_AUTH_SOCK;
    const berth = async (...args: string[]) => {
      const timed = await timeNode([BERTH, '--state', state, ...args], { env, timeoutMs: 600_000 });
      if (timed.code !== 0)
        throw new Error(`berth ${args.join(' ')} failed (${timed.code}): ${timed.stderr.trim()}`);
      return timed;
    };
    const ansible = noAnsible ? undefined : await ansiblePlaybook(dir, fleet.sshConfig);
    const ansibleMs: number[] = [];
    const berthMs: number[] = [];
    const previewMs: number[] = [];
    const bareMs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const mine = hosts[sides * round]?.name as string;
      const bare = hosts[sides * round + 1]?.name as string;
      await berth('assign', mine, 'web');
      log(`packages: round ${round + 1} of ${rounds}`);
      const started = performance.now();
      const preview = await berth('converge', mine);
      previewMs.push(performance.now() - started);
      const digest = /digest ([0-9a-f]{64})\s*$/.exec(preview.stdout)?.[1] ?? '';
      await berth('--lock-timeout', '1m', 'converge', mine, '--yes', '--digest', digest);
      berthMs.push(performance.now() - started);
      const at = performance.now();
      const installed = await fleet.ssh(
        bare,
        `DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${PACKAGES.join(' ')}`,
      );
      if (installed.code !== 0) throw new Error(`apt-get install on ${bare}: ${installed.stderr}`);
      bareMs.push(performance.now() - at);
      if (ansible) ansibleMs.push(ansible(hosts[sides * round + 2]?.name as string));
    }
    const berthMedian = median(berthMs);
    const bareMedian = median(bareMs);
    return [
      `packages: ${PACKAGES.join(' + ')} on a fresh fleet host, from a local repository (median of ${rounds}; goal ≤ 1.15×)`,
      '',
      table(
        ['how', 'ms', 'ratio'],
        [
          ['bare apt-get install over ssh', fmt(bareMedian), ratio(1)],
          ['berth converge (preview + act)', fmt(berthMedian), ratio(berthMedian / bareMedian)],
          ['  of which the preview', fmt(median(previewMs)), ratio(median(previewMs) / bareMedian)],
          ansible
            ? [
                'Ansible (apt module)',
                fmt(median(ansibleMs)),
                ratio(median(ansibleMs) / bareMedian),
              ]
            : ['Ansible', '—', noAnsible ?? ''],
        ],
      ),
    ].join('\n');
  } finally {
    await exitMasters(join(runtime, 'berth-ssh'));
    await exitMasters(join(dir, 'ansible', 'cp'));
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(repository, { recursive: true, force: true });
  }
}

/** A playbook installing the packages with Ansible's apt module on one host; each run's wall time in ms. */
async function ansiblePlaybook(dir: string, sshConfig: string): Promise<(host: string) => number> {
  const project = join(dir, 'ansible');
  await mkdir(project);
  await writeFile(
    join(project, 'playbook.yml'),
    `- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.apt:\n        name: [${PACKAGES.join(', ')}]\n        state: present\n`,
  );
  const config = join(project, 'ansible.cfg');
  await writeFile(
    config,
    [
      '[defaults]',
      'host_key_checking = True',
      'interpreter_python = /usr/bin/python3',
      'retry_files_enabled = False',
      '[ssh_connection]',
      'pipelining = True',
      `ssh_args = -F ${sshConfig} -o ControlMaster=auto -o ControlPersist=60s`,
      `control_path_dir = ${join(project, 'cp')}`,
      '',
    ].join('\n'),
  );
  return (host) => {
    const started = performance.now();
    const result = spawnSync('ansible-playbook', ['-i', `${host},`, 'playbook.yml'], {
      cwd: project,
      env: { ...cleanEnv({ ANSIBLE_CONFIG: config }), SSH_AUTH_SOCK: '' },
      encoding: 'utf8',
      timeout: 600_000,
    });
    const ms = performance.now() - started;
    if (result.status !== 0)
      throw new Error(`ansible-playbook failed (${result.status}): ${result.stdout.slice(-800)}`);
    return ms;
  };
}
