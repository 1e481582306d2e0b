// A target of many nodes in one berth process: twenty rooted nodes converged by one
// `berth converge @fleet --yes --parallel 20` against one node alone, and a preview of
// @all over 1,000 rooted nodes against 10, per node.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BERTH, fmt, log, median, ratio, table, timeNode } from './stats.ts';

/** A state directory of `nodes` rooted nodes n0…, all in group `fleet`, each record as given. */
async function makeTargetWorld(nodes: number, modules: Record<string, unknown>, record: unknown) {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-targets-'));
  const state = join(dir, 'state');
  await mkdir(join(state, 'modules'), { recursive: true });
  const inventory: Record<string, { root: string }> = {};
  const names = Array.from({ length: nodes }, (_, i) => `n${i}`);
  for (const name of names) {
    const root = join(dir, 'roots', name);
    await mkdir(root, { recursive: true });
    inventory[name] = { root };
  }
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({ nodes: inventory, groups: { fleet: names } }),
  );
  for (const [name, definition] of Object.entries(modules))
    await writeFile(join(state, 'modules', `${name}.json`), JSON.stringify(definition));
  const reset = async () => {
    const text = `${JSON.stringify(record, null, 1)}\n`;
    for (let start = 0; start < nodes; start += 256) {
      await Promise.all(
        names.slice(start, start + 256).map(async (name) => {
          const here = join(state, 'nodes', name);
          await rm(join(here, 'previews'), { recursive: true, force: true });
          await mkdir(here, { recursive: true, mode: 0o700 });
          await writeFile(join(here, 'record.json'), text, { mode: 0o600 });
        }),
      );
    }
  };
  await reset();
  return { state, reset, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const digestOf = (said = '') => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

async function berth(state: string, args: string[], rss = false) {
  const run = await timeNode([BERTH, '--state', state, ...args], {
    usage: rss,
    timeoutMs: 600_000,
  });
  if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
  return run;
}

/** Twenty rooted nodes, start `sleep 2`, converged by one process, against one node alone. */
async function twenty(rounds: number): Promise<string> {
  const NODES = 20;
  const world = await makeTargetWorld(
    NODES,
    { slow: { description: 'sleeps', start: 'sleep 2' } },
    { assigned: ['slow'], managed: {} },
  );
  try {
    log(`targets: ${NODES} nodes in one berth converge @fleet --yes, ${rounds} rounds`);
    const act = async (target: string, extra: string[]) => {
      await world.reset();
      const preview = await berth(world.state, ['converge', target]);
      return (
        await berth(world.state, [
          'converge',
          target,
          '--yes',
          '--digest',
          digestOf(preview.stdout),
          ...extra,
        ])
      ).ms;
    };
    const one: number[] = [];
    const byDefault: number[] = [];
    const wide: number[] = [];
    for (let round = 0; round < rounds; round++) {
      one.push(await act('n0', []));
      byDefault.push(await act('@fleet', []));
      wide.push(await act('@fleet', ['--parallel', String(NODES)]));
    }
    const row = (what: string, samples: number[]) => [
      what,
      fmt(median(samples)),
      ratio(median(samples) / median(one)),
    ];
    return [
      `Targets: ${NODES} rooted nodes, each start sleep 2, in one berth converge --yes process, against one node alone; median of ${rounds} rounds (goal ≤ 1.5×, read on --parallel ${NODES}: the default of 10 is two rounds of the sleep, 2× by construction)`,
      '',
      table(
        ['act', 'ms', 'against one node'],
        [
          row('berth converge n0 (one node)', one),
          row(`berth converge @fleet (${NODES} nodes, --parallel 10, the default)`, byDefault),
          row(`berth converge @fleet --parallel ${NODES}`, wide),
        ],
      ),
    ].join('\n');
  } finally {
    await world.cleanup();
  }
}

/**
 * A preview of @all over many rooted nodes, per node, against 10 nodes: per node as it
 * stands (the process's start shared out), and past one node (what each further node adds
 * to a preview of one), so that a start shared by more nodes cannot pass for a cheaper node.
 */
async function previews(sizes: readonly number[], rounds: number): Promise<string> {
  const modules = {
    app: {
      description: 'an app with a file and a data directory',
      data: ['/var/lib/app'],
      files: { '/etc/app.conf': { content: 'port 80\n' } },
      start: 'true',
    },
  };
  const measured: { size: number; ms: number; rssMiB: number }[] = [];
  for (const size of [1, ...sizes]) {
    const world = await makeTargetWorld(size, modules, { assigned: ['app'], managed: {} });
    try {
      log(`targets: a preview of @all over ${size} nodes, ${rounds} rounds`);
      const samples: number[] = [];
      let rssMiB = 0;
      for (let round = 0; round < rounds; round++) {
        const run = await berth(world.state, ['converge', '@all'], true);
        samples.push(run.ms);
        rssMiB = Math.max(rssMiB, run.rssMiB ?? 0);
      }
      measured.push({ size, ms: median(samples), rssMiB });
    } finally {
      await world.cleanup();
    }
  }
  const [one, base, ...rest] = measured as [(typeof measured)[0], (typeof measured)[0]];
  const perNode = (at: (typeof measured)[0]) => at.ms / at.size;
  const pastOne = (at: (typeof measured)[0]) => (at.ms - one.ms) / (at.size - 1);
  const rows = [
    [String(one.size), fmt(one.ms), fmt(one.ms, 2), '', '', '', fmt(one.rssMiB, 0)],
    ...[base, ...rest].map((at) => [
      String(at.size),
      fmt(at.ms),
      fmt(perNode(at), 2),
      ratio(perNode(at) / perNode(base)),
      fmt(pastOne(at), 2),
      ratio(pastOne(at) / pastOne(base)),
      fmt(at.rssMiB, 0),
    ]),
  ];
  return [
    `A preview of @all (one module a node: a file, a data directory), per node, against ${sizes[0]} nodes, and past one node ((wall − wall of one node) ÷ (nodes − 1)); median of ${rounds} rounds (goal ≤ 1.2×)`,
    '',
    table(
      [
        'nodes',
        'wall, ms',
        'per node, ms',
        `against ${base.size}`,
        'past one node, ms a node',
        `against ${base.size}`,
        'peak RSS, MiB',
      ],
      rows,
    ),
  ].join('\n');
}

export async function benchTargets(quick: boolean): Promise<string> {
  const parts = [await twenty(quick ? 1 : 3), await previews([10, 1_000], quick ? 1 : 3)];
  return parts.join('\n\n');
}
