import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DelayProxy, startDelayProxy } from '../../tests/fleet/delay-proxy.ts';
import { exitMasters, type Fleet, fleetUnavailable, startFleet } from '../../tests/fleet/fleet.ts';
import { APP, ansibleAvailable, ansibleProject } from './ansible.ts';
import { startIssuer } from './issuer.ts';
import { post } from './post.ts';
import { startBerthApi } from './spawn-server.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, type Timed, table, timeNode } from './stats.ts';

const DELAY_MS = 25;

/** A module whose every path is its own, under the hosts' private paths. */
function moduleAt(name: string, start: string) {
  return {
    description: `bench module ${name}`,
    data: [`/var/lib/berth-test/${name}`],
    secrets: { token: { path: `/etc/berth-test/${name}/token` } },
    files: {
      [`/etc/berth-test/${name}/${name}.conf`]: {
        mode: '0640',
        content: `name = ${name}\ntoken = {{secret token}}\n`,
      },
    },
    start,
  };
}

interface Bench {
  fleet: Fleet;
  proxy?: DelayProxy;
  dir: string;
  sshConfig: string;
  /** Runtime directories (ControlMaster sockets) made: every master in them is ended. */
  runtimes: string[];
}

/** A state directory with this inventory and catalog, naming the bench's ssh config. */
async function stateWith(
  bench: Bench,
  name: string,
  nodes: Record<string, unknown>,
  modules: Record<string, unknown>,
): Promise<string> {
  const state = join(bench.dir, name);
  await mkdir(join(state, 'modules'), { recursive: true });
  await writeFile(join(state, 'berth.json'), JSON.stringify({ nodes, sshConfig: bench.sshConfig }));
  for (const [module, definition] of Object.entries(modules)) {
    await writeFile(join(state, 'modules', `${module}.json`), JSON.stringify(definition));
  }
  return state;
}

async function newRuntime(bench: Bench): Promise<string> {
  const runtime = await mkdtemp('/tmp/bfb-');
  bench.runtimes.push(runtime);
  return runtime;
}

function berthIn(state: string, runtime: string) {
  const env = { ...cleanEnv({ XDG_RUNTIME_DIR: runtime }) };
  delete env.SSH_AUTH_SOCK;
  return async (...args: string[]): Promise<Timed> => {
    const timed = await timeNode([BERTH, '--state', state, ...args], { env, timeoutMs: 120_000 });
    if (timed.code !== 0) {
      throw new Error(`berth ${args.join(' ')} failed (${timed.code}): ${timed.stderr.trim()}`);
    }
    return timed;
  };
}

const digestOf = (said: string) => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

/** A converge as an operator runs it: the preview, then the act on its digest. */
async function converge(berth: ReturnType<typeof berthIn>, node: string) {
  const started = performance.now();
  const preview = await berth('converge', node);
  const act = await berth('converge', node, '--yes', '--digest', digestOf(preview.stdout));
  return { ms: performance.now() - started, preview, act };
}

async function roundTrips(bench: Bench, runs: number): Promise<string[]> {
  const catalog: Record<string, unknown> = {};
  for (let i = 1; i <= 10; i++) catalog[`rt${i}`] = moduleAt(`rt${i}`, 'true');
  const state = await stateWith(
    bench,
    'round-trips',
    { alpha: { ssh: 'alpha' }, slow: { ssh: 'alpha-slow' } },
    catalog,
  );
  const berth = berthIn(state, await newRuntime(bench));
  const alpha = bench.fleet.host('alpha');
  const sessions = async (work: () => Promise<unknown>) => {
    const before = await alpha.sessionsOpened();
    await work();
    return (await alpha.sessionsOpened()) - before;
  };
  for (const node of ['alpha', 'slow']) {
    for (const module of Object.keys(catalog)) await berth('assign', node, module);
  }
  log('fleet: round trips and the delayed host');
  const adoptSessions = await sessions(() => berth('adopt', 'alpha'));
  const previewSessions = await sessions(() => berth('converge', 'alpha'));
  // Behind the proxy: the first call opens the connection (cold), the rest reuse it. Each
  // delayed command is paired with the same one on the undelayed host, run next to it
  // (in turns, the order swapped every other run): "added" is the median of the pairs'
  // differences, so the machine's drift (Node's start swings by hundreds of ms when the
  // cores are busy) falls out of it as far as it can.
  const coldSlow = (await berth('adopt', 'slow')).ms;
  const coldNear = (await berth('adopt', 'alpha')).ms;
  const pairs = { adopt: [] as number[], preview: [] as number[] };
  const walls = { adopt: [] as number[], preview: [] as number[] };
  for (let run = 0; run < runs; run++) {
    for (const [what, args] of [
      ['adopt', ['adopt']],
      ['preview', ['converge']],
    ] as const) {
      const [slow, near] =
        run % 2 === 0
          ? [(await berth(...args, 'slow')).ms, (await berth(...args, 'alpha')).ms]
          : [(await berth(...args, 'alpha')).ms, (await berth(...args, 'slow')).ms].reverse();
      pairs[what].push((slow as number) - (near as number));
      walls[what].push(slow as number);
    }
  }
  const bound = 2 * 2 * DELAY_MS + 100;
  const row = (what: string, wall: number, added: number) => [
    what,
    fmt(wall),
    fmt(added),
    fmt(bound),
    added <= bound ? 'yes' : 'no',
  ];
  return [
    `Round trips, as sshd sessions on the host, a ten-module catalog: adopt ${adoptSessions}, converge preview ${previewSessions}`,
    '',
    `Behind a ${DELAY_MS} ms delay each way (round trip ${2 * DELAY_MS} ms), ${runs} pairs; "added" is the median of each command's wall time less that of the same command on the undelayed host, run beside it`,
    '',
    table(
      [
        'command (ControlMaster warm unless said)',
        'wall ms',
        'added ms',
        'bound ms',
        'added ≤ bound',
      ],
      [
        row('berth adopt, cold (new connection)', coldSlow, coldSlow - coldNear),
        row('berth adopt', median(walls.adopt), median(pairs.adopt)),
        row('berth converge (preview)', median(walls.preview), median(pairs.preview)),
      ],
    ),
  ];
}

/** The machine's CPU time so far, busy and all, in clock ticks (from /proc/stat). */
async function cpuTicks(): Promise<{ busy: number; all: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const all = ticks.reduce((sum, tick) => sum + tick, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: all - idle, all };
}

/** An operator's converge through the Command API: the preview, then the act on its digest. */
async function convergeOverApi(url: string, token: string, agent: Agent, node: string) {
  const started = performance.now();
  const preview = await post(url, '/converge', JSON.stringify({ node }), agent, token);
  const digest = digestOf(preview.body.said ?? '');
  const act = await post(
    url,
    '/converge',
    JSON.stringify({ node, yes: true, digest }),
    agent,
    token,
  );
  if (act.status !== 200)
    throw new Error(`API converge ${node}: ${act.status} ${act.body.refused}`);
  return { ms: performance.now() - started, said: act.body.said ?? '' };
}

/**
 * Twenty converges at once against one alone, through both faces: forty berth processes
 * (a preview and an act each), and forty requests to one `berth api`. Each face has
 * nodes and modules of its own, so that each converge writes its files and runs its hook.
 */
async function manyAtOnce(bench: Bench): Promise<string[]> {
  const hosts = ['alpha', 'bravo', 'charlie'];
  const nodes: Record<string, unknown> = {};
  const modules: Record<string, unknown> = {};
  const namesFor = (face: string) => ({
    many: Array.from({ length: 20 }, (_, i) => `${face}${i}`),
    solo: `${face}solo`,
  });
  const cli = namesFor('m');
  const api = namesFor('a');
  for (const names of [cli, api]) {
    for (const [i, name] of [...names.many, names.solo].entries()) {
      const host = hosts[i % 3] as string;
      nodes[name] = { ssh: host, ...(host === 'bravo' ? { sudo: true } : {}) };
      modules[`w${name}`] = moduleAt(`w${name}`, 'sleep 2');
    }
  }
  const state = await stateWith(bench, 'many', nodes, modules);
  const berth = berthIn(state, await newRuntime(bench));
  for (const names of [cli, api]) {
    for (const name of [...names.many, names.solo]) await berth('assign', name, `w${name}`);
  }
  for (const host of hosts) await berth('adopt', cli.many[hosts.indexOf(host)] as string); // warm
  log('fleet: one converge alone, then twenty at once: command line');
  const cliOne = await converge(berth, cli.solo);
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0];
  const ticksBefore = await cpuTicks();
  const started = performance.now();
  const cliAll = await Promise.all(cli.many.map((name) => converge(berth, name)));
  const cliWall = performance.now() - started;
  const ticksAfter = await cpuTicks();
  const busy = (ticksAfter.busy - ticksBefore.busy) / (ticksAfter.all - ticksBefore.all);
  const cliDone = cliAll.filter((each) => each.act.stdout.includes('is as assigned')).length;

  log('fleet: one converge alone, then twenty at once: Command API');
  const issuer = await startIssuer();
  const token = issuer.token({ sub: 'bench', aud: 'berth' });
  const agent = new Agent({ keepAlive: true, maxSockets: 20 });
  // Its ssh masters in a runtime directory of its own, ended with the bench's.
  const server = await startBerthApi('berth api (fleet)', state, issuer.url, {
    env: { XDG_RUNTIME_DIR: await newRuntime(bench), SSH_AUTH_SOCK: '' },
    pinned: false,
  });
  try {
    for (const host of hosts) {
      const warm = await post(
        server.url,
        '/adopt',
        JSON.stringify({ node: api.many[hosts.indexOf(host)] }),
        agent,
        token,
      );
      if (warm.status !== 200) throw new Error(`API adopt: ${warm.status} ${warm.body.refused}`);
    }
    const apiOne = await convergeOverApi(server.url, token, agent, api.solo);
    const apiStarted = performance.now();
    const apiAll = await Promise.all(
      api.many.map((name) => convergeOverApi(server.url, token, agent, name)),
    );
    const apiWall = performance.now() - apiStarted;
    const apiDone = apiAll.filter((each) => each.said.includes('is as assigned')).length;
    const row = (through: string, one: number, all: number) => [
      through,
      fmt(one),
      fmt(all),
      ratio(all / one),
    ];
    return [
      'Twenty converges over ssh at once (7, 7 and 6 nodes on three hosts, each a start hook `sleep 2`), against one alone; a converge is a preview and the act on its digest',
      '',
      table(
        ['through', 'one alone, ms', 'twenty at once, ms', 'ratio (bound 1.5×)'],
        [
          row(`command line (40 berth processes; ${cliDone} of 20 done)`, cliOne.ms, cliWall),
          row(
            `Command API (40 requests to one berth api; ${apiDone} of 20 done)`,
            apiOne.ms,
            apiWall,
          ),
        ],
      ),
      '',
      `The machine's cores were ${Math.round(busy * 100)} % busy during the command line's twenty (every process on it, not only berth's); load average ${load} as they began.`,
    ];
  } finally {
    agent.destroy();
    await server.stop();
    await issuer.close();
  }
}

async function againstAnsible(bench: Bench): Promise<string[]> {
  const why = ansibleAvailable();
  if (why) return [`Ansible beside berth: skipped: ${why}`];
  const hosts = ['alpha', 'bravo', 'charlie'];
  const nodes = Object.fromEntries(
    hosts.map((host) => [
      `app-${host}`,
      { ssh: host, ...(host === 'bravo' ? { sudo: true } : {}) },
    ]),
  );
  const state = await stateWith(bench, 'app', nodes, { app: APP });
  const berth = berthIn(state, await newRuntime(bench));
  for (const node of Object.keys(nodes)) await berth('assign', node, 'app');
  const berthRun = async () => {
    const started = performance.now();
    await Promise.all(Object.keys(nodes).map((node) => converge(berth, node)));
    return performance.now() - started;
  };

  const ansible = await ansibleProject({
    dir: join(bench.dir, 'ansible'),
    hosts,
    sudo: ['bravo'],
    sshConfig: bench.sshConfig,
    forks: 20,
  });
  bench.runtimes.push(ansible.controlDir);
  const ansibleRun = () => ansible.run();
  log('fleet: Ansible and berth, first run and no-change re-run');
  const ansibleFirst = await ansibleRun();
  const ansibleAgain = await ansibleRun();
  const alpha = bench.fleet.host('alpha');
  const sessionsBefore = await alpha.sessionsOpened();
  const berthFirst = await berthRun();
  const sessionsFirst = (await alpha.sessionsOpened()) - sessionsBefore;
  const berthAgain = await berthRun();
  const sessionsAgain = (await alpha.sessionsOpened()) - sessionsBefore - sessionsFirst;
  const secretModes = await bench.fleet
    .host('bravo')
    .exec('stat -c %a /etc/berth-test/app/s1 /etc/berth-test/ans/s1');
  return [
    "The same work as an Ansible playbook (ten files with secrets, two data directories, a start hook, on three hosts, one through sudo): Debian ansible, pipelining, ControlPersist, forks 20, the fleet's ssh config and known_hosts; berth: three converges at once, preview and act each",
    '',
    table(
      ['run', 'Ansible ms', 'berth ms', 'berth ÷ Ansible (bound 0.10×)'],
      [
        ['first', fmt(ansibleFirst), fmt(berthFirst), ratio(berthFirst / ansibleFirst)],
        ['no change', fmt(ansibleAgain), fmt(berthAgain), ratio(berthAgain / ansibleAgain)],
      ],
    ),
    '',
    `berth's sshd sessions on alpha, preview and act: first run ${sessionsFirst} (the preview's survey; the act's survey, one batch of two directories and ten files, the start hook), no change ${sessionsAgain}`,
    `secret file modes on bravo, berth then Ansible: ${secretModes.stdout.trim().split('\n').join(', ')}`,
  ];
}

export async function benchFleet(runs: number): Promise<string> {
  const why = fleetUnavailable();
  if (why) return `Fleet (berth over ssh): skipped: ${why}`;
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-fleet-'));
  log('fleet: starting three ssh hosts');
  const fleet = await startFleet({ hosts: 3, sshdOptions: ['MaxSessions 30', 'MaxStartups 60'] });
  const bench: Bench = { fleet, dir, sshConfig: join(dir, 'ssh_config'), runtimes: [] };
  try {
    const alpha = fleet.host('alpha');
    const proxy = await startDelayProxy({
      host: alpha.address,
      port: alpha.port,
      delayMs: DELAY_MS,
    });
    bench.proxy = proxy;
    const config = await readFile(fleet.sshConfig, 'utf8');
    await writeFile(
      bench.sshConfig,
      `Host alpha-slow\n  HostName ${proxy.host}\n  Port ${proxy.port}\n  User root\n  HostKeyAlias alpha\n${config}`,
    );
    const parts = [
      ...(await roundTrips(bench, runs)),
      '',
      ...(await manyAtOnce(bench)),
      '',
      ...(await againstAnsible(bench)),
    ];
    return parts.join('\n');
  } finally {
    for (const runtime of bench.runtimes) await exitMasters(runtime);
    await bench.proxy?.close();
    await fleet.stop();
    for (const runtime of bench.runtimes) await rm(runtime, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  }
}
