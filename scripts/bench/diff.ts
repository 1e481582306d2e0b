import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BERTH, fmt, log, median, table, timeNode } from './stats.ts';
import { makeBenchWorld } from './world.ts';

/** The goals of a take preview of a 5,000-line file that differs (issue 23). */
const GOAL_MS = 400;
const GOAL_MIB = 100;
const LINES = 5_000;

/** A configuration file of `LINES` lines, half of them comments, like Debian's. */
function config(tag: (index: number) => string): string {
  return Array.from({ length: LINES }, (_, i) =>
    i % 2 === 0 ? `# what setting ${i + 1} does, said at length` : `setting_${i} = ${tag(i)}`,
  ).join('\n');
}

/** The files on the box, each against the module's `config(() => 'berth')`. */
const CASES: [string, string][] = [
  [
    '1 setting in 50 differs, a block of comments gone',
    config((i) => (i % 100 === 1 ? 'admin' : 'berth'))
      .split('\n')
      .filter((line, i) => !(i > 2_000 && i < 2_100 && line.startsWith('#')))
      .join('\n'),
  ],
  ['every setting differs', config(() => 'admin')],
  // Myers's search up to its bound, then words that say the order is too different.
  [
    'the same lines in the reverse order',
    config(() => 'berth')
      .split('\n')
      .reverse()
      .join('\n'),
  ],
];

/**
 * `berth take` previews of a 5,000-line file that differs from what berth writes: wall
 * time spawn → exit and peak resident set, medians of `runs`, against the goals.
 */
export async function benchDiff(runs: number): Promise<string> {
  const rows: string[][] = [];
  for (const [name, held] of CASES) {
    const world = await makeBenchWorld(1);
    try {
      const path = '/etc/big/big.conf';
      await writeFile(
        join(world.state, 'modules', 'big.json'),
        JSON.stringify({ files: { [path]: { content: `${config(() => 'berth')}\n` } } }),
      );
      const onBox = join(world.dir, 'box', path);
      await mkdir(dirname(onBox), { recursive: true });
      await writeFile(onBox, `${held}\n`);
      const state = ['--state', world.state];
      const adopted = await timeNode([BERTH, ...state, 'adopt', 'n0']);
      if (adopted.code !== 0) throw new Error(`adopt failed: ${adopted.stderr}`);
      log(`diff: ${name}, ${runs} runs`);
      const ms: number[] = [];
      const mib: number[] = [];
      let lines = 0;
      for (let run = 0; run < runs; run++) {
        const timed = await timeNode([BERTH, ...state, 'take', 'n0', 'big'], { usage: true });
        if (timed.code !== 0) throw new Error(`take preview failed: ${timed.stderr}`);
        ms.push(timed.ms);
        mib.push(timed.rssMiB ?? Number.NaN);
        lines = timed.stdout.split('\n').length;
      }
      rows.push([name, fmt(median(ms)), fmt(median(mib)), String(lines)]);
      if (rows.length === 1) {
        // The floor on this machine now: a command that opens the same state, no diff.
        const floor: number[] = [];
        for (let run = 0; run < runs; run++)
          floor.push((await timeNode([BERTH, ...state, 'status'])).ms);
        rows.push(['(berth status on the same state, for the floor)', fmt(median(floor)), '', '']);
      }
    } finally {
      await world.cleanup();
    }
  }
  return [
    `Take preview of a ${LINES}-line file that differs (goal ≤ ${GOAL_MS} ms and ≤ ${GOAL_MIB} MiB), median of ${runs}`,
    '',
    table(['the file on the box', 'ms', 'peak MiB', 'lines said'], rows),
  ].join('\n');
}
