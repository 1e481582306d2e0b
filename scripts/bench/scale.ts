import { BERTH, fmt, log, median, ratio, table, timeNode } from './stats.ts';
import { type BenchWorld, MODULES, makeBenchWorld } from './world.ts';

const COMMANDS = ['assign n0 extra', 'converge n0 (preview)', 'status (every node)'] as const;
type Name = (typeof COMMANDS)[number];

function argsOf(name: Name, state: string): string[] {
  const args = {
    'assign n0 extra': ['assign', 'n0', 'extra'],
    'converge n0 (preview)': ['converge', 'n0'],
    'status (every node)': ['status'],
  }[name];
  return [BERTH, '--state', state, ...args];
}

/**
 * Scale: each command over a state of 1,000, 10,000 and 100,000 assignments
 * (nodes × 10 modules), the node records written directly. Wall time and peak RSS of the
 * child; growth is the cost past a one-node, one-assignment state (the cold start).
 */
/** Differences in wall time below this are start-up noise on this machine. */
const NOISE_MS = 10;

export async function benchScale(sizes: readonly number[], runs: number): Promise<string> {
  const base = await measure(1, 1, runs);
  const results: { size: number; figures: Map<Name, { ms: number; rss: number }> }[] = [];
  for (const size of sizes) {
    results.push({ size, figures: await measure(size / MODULES, MODULES, runs) });
  }
  const rows: string[][] = [];
  for (const name of COMMANDS) {
    const fixed = base.get(name)?.ms ?? Number.NaN;
    let previous: { size: number; ms: number } | undefined;
    for (const { size, figures } of results) {
      const { ms, rss } = figures.get(name) ?? { ms: Number.NaN, rss: Number.NaN };
      // Past the cold start, a cost within the noise of it says nothing: no ratio of it.
      const past =
        previous && previous.ms - fixed >= NOISE_MS
          ? ` (past cold start ${ratio((ms - fixed) / (previous.ms - fixed), 1)})`
          : '';
      const growth = previous
        ? `${ratio(ms / previous.ms)}${past} for ${size / previous.size}× the state`
        : '';
      rows.push([name, fmt(size), fmt(ms, 0), fmt(rss, 0), growth]);
      previous = { size, ms };
    }
  }
  return [
    `Scale: nodes × ${MODULES} modules, median of ${runs} runs; "past cold start" takes off the same command over a one-assignment state (${COMMANDS.map((name) => `${name} ${fmt(base.get(name)?.ms ?? Number.NaN, 0)} ms`).join(', ')})`,
    '',
    table(['command', 'assignments', 'ms', 'peak RSS MiB', 'growth'], rows),
  ].join('\n');
}

async function measure(nodes: number, perNode: number, runs: number) {
  const world = await makeBenchWorld(nodes);
  const samples = new Map<Name, { ms: number[]; rss: number[] }>(
    COMMANDS.map((name) => [name, { ms: [], rss: [] }]),
  );
  try {
    log(`scale: ${nodes * perNode} assignments, ${runs} runs`);
    await world.writeState(nodes, perNode);
    // The first open of a state directory (its one search for earlier vaults) is not what
    // is measured.
    await timeNode([BERTH, '--state', world.state, 'status', 'n0']);
    for (let run = 0; run < runs; run++) {
      for (const name of COMMANDS) {
        await reset(world, name, perNode);
        const timed = await timeNode(argsOf(name, world.state), {
          usage: true,
          timeoutMs: 120_000,
        });
        if (timed.code !== 0) throw new Error(`${name} failed (${timed.code}): ${timed.stderr}`);
        samples.get(name)?.ms.push(timed.ms);
        samples.get(name)?.rss.push(timed.rssMiB ?? Number.NaN);
      }
    }
    return new Map(
      COMMANDS.map((name) => {
        const taken = samples.get(name) ?? { ms: [], rss: [] };
        return [name, { ms: median(taken.ms), rss: median(taken.rss) }];
      }),
    );
  } finally {
    await world.cleanup();
  }
}

/** Every assign run assigns for real: n0's record is put back before each. */
async function reset(world: BenchWorld, name: Name, perNode: number) {
  if (name === 'assign n0 extra') await world.writeState(1, perNode);
}
