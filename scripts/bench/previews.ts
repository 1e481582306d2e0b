// Kept previews against rounds: a group preview and its act, round after round, on nodes
// whose module has eight files of 200 KB. A round's cost must not grow with the previews
// kept before it.
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BERTH, fmt, log, median, ratio, table, timeNode } from './stats.ts';

const FILES = 8;
const FILE_BYTES = 200_000;

/** A state directory of `nodes` rooted nodes n0…, all in group `fleet`, each to run `big`. */
async function makeWorld(nodes: number) {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-previews-'));
  const state = join(dir, 'state');
  await mkdir(join(state, 'modules', 'big'), { recursive: true });
  const names = Array.from({ length: nodes }, (_, i) => `n${i}`);
  const inventory: Record<string, { root: string }> = {};
  for (const name of names) {
    const root = join(dir, 'roots', name);
    await mkdir(root, { recursive: true });
    inventory[name] = { root };
    const here = join(state, 'nodes', name);
    await mkdir(here, { recursive: true, mode: 0o700 });
    await writeFile(join(here, 'record.json'), JSON.stringify({ assigned: ['big'], managed: {} }));
  }
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({ nodes: inventory, groups: { fleet: names } }),
  );
  const files = Object.fromEntries(
    Array.from({ length: FILES }, (_, i) => [`/etc/big/part${i}.conf`, { source: `big/part${i}` }]),
  );
  await writeFile(
    join(state, 'modules', 'big.json'),
    JSON.stringify({ description: 'eight files of 200 KB', files }),
  );
  /**
   * Every file of the module changes each round, its first line alone (of one length
   * whatever the round), so that each preview and act does as much as the one before.
   */
  const writeSources = async (round: number) => {
    for (let i = 0; i < FILES; i++) {
      const head = `# round ${String(round).padStart(4, '0')}\n`;
      await writeFile(
        join(state, 'modules', 'big', `part${i}`),
        head + 'x'.repeat(FILE_BYTES - head.length),
      );
    }
  };
  return { state, writeSources, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function berth(state: string, args: string[]) {
  const run = await timeNode([BERTH, '--state', state, ...args], {
    usage: true,
    timeoutMs: 600_000,
  });
  if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
  return run;
}

/** Bytes of what a node keeps for its previews: a previews.json, or a directory of them. */
async function keptBytes(state: string, node: string): Promise<number> {
  const here = join(state, 'nodes', node);
  let bytes = 0;
  for (const name of await readdir(here, { recursive: true })) {
    if (!name.startsWith('previews')) continue;
    const info = await stat(join(here, name));
    if (info.isFile()) bytes += info.size;
  }
  return bytes;
}

/**
 * `rounds` rounds of `berth converge @fleet` and its act, over `nodes` nodes, `repeats`
 * times from a fresh state: each round's median wall time, against the first round's.
 */
export async function benchPreviews(nodes: number, rounds: number, repeats: number) {
  const byRound: number[][] = Array.from({ length: rounds }, () => []);
  const cpuByRound: number[][] = Array.from({ length: rounds }, () => []);
  const kept: number[] = [];
  for (let repeat = 0; repeat < repeats; repeat++) {
    log(`previews: ${nodes} nodes, ${rounds} rounds of a group preview and act (${repeat + 1})`);
    const world = await makeWorld(nodes);
    try {
      // Round 0, not counted, puts the files on the nodes: from then on each round
      // rewrites files that are there, and its preview shows how they differ.
      for (let round = 0; round <= rounds; round++) {
        await world.writeSources(round);
        const preview = await berth(world.state, ['converge', '@fleet']);
        const digest = /digest ([0-9a-f]{64})\s*$/.exec(preview.stdout)?.[1] ?? '';
        const act = await berth(world.state, ['converge', '@fleet', '--yes', '--digest', digest]);
        if (round === 0) continue;
        byRound[round - 1]?.push(preview.ms + act.ms);
        cpuByRound[round - 1]?.push((preview.cpuMs ?? Number.NaN) + (act.cpuMs ?? Number.NaN));
      }
      kept.push(await keptBytes(world.state, 'n0'));
    } finally {
      await world.cleanup();
    }
  }
  const first = median(byRound[0] ?? []);
  const firstCpu = median(cpuByRound[0] ?? []);
  const rows = byRound.map((samples, round) => {
    const cpu = median(cpuByRound[round] ?? []);
    return [
      String(round + 1),
      fmt(median(samples)),
      round === 0 ? '' : ratio(median(samples) / first),
      fmt(cpu),
      round === 0 ? '' : ratio(cpu / firstCpu),
    ];
  });
  return [
    `Kept previews: ${nodes} rooted nodes in a group, a module of ${FILES} files of ${FILE_BYTES / 1000} KB (each changed every round), ${rounds} rounds of berth converge @fleet and its act; median of ${repeats} runs (goal: round ${rounds} ≤ 1.2× round 1; CPU is both processes', all threads'); what n0 keeps for its previews after the last round: ${fmt(median(kept))} bytes`,
    '',
    table(['round', 'preview + act, ms', 'against round 1', 'CPU ms', 'against round 1'], rows),
  ].join('\n');
}
