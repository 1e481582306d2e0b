import { clearingLines, type KeptValue, mintSecret } from '../../src/commands/secrets.ts';
import { fmt, median, ratio, table } from './stats.ts';

/** A node's secrets, as many as a busy node keeps. */
const SECRETS: KeptValue[] = Array.from({ length: 50 }, (_, n) => ({
  module: `m${n}`,
  secret: 'k',
  value: mintSecret(48),
}));

/** Milliseconds to clear `lines` lines of a chatty hook's output of `secrets`, told as they come. */
function clearing(lines: number, secrets: readonly KeptValue[]): number {
  let told = 0;
  const cleared = clearingLines(secrets, () => told++);
  const began = performance.now();
  for (let n = 0; n < lines; n++) cleared.write(`progress ${n}: copied files to /var/lib/app\n`);
  cleared.end();
  const ms = performance.now() - began;
  if (told !== lines) throw new Error(`${told} lines told of ${lines}`);
  return ms;
}

/**
 * A hook's output cleared of a node's 50 secrets as it comes, line by line: its cost
 * against the same output with no secret, and at twice the lines (about 2× if it grows
 * with the output, not its square). Medians of `runs`.
 */
export function benchHookOutput(runs: number): string {
  const cases: [string, number, readonly KeptValue[]][] = [
    ['20,000 lines, no secret (the floor)', 20_000, []],
    ['20,000 lines, 50 secrets', 20_000, SECRETS],
    ['40,000 lines, 50 secrets', 40_000, SECRETS],
  ];
  const times = cases.map(() => [] as number[]);
  for (const [, , secrets] of cases) clearing(2_000, secrets); // compiled before timed
  for (let run = 0; run < runs; run++)
    for (const [i, [, lines, secrets]] of cases.entries()) times[i]?.push(clearing(lines, secrets));
  const ms = times.map(median);
  const [floor = Number.NaN, twenty = Number.NaN] = ms;
  const rows = cases.map(([name], i) => [
    name,
    fmt(ms[i] ?? Number.NaN, 1),
    ratio((ms[i] ?? Number.NaN) / floor),
    i === 2 ? ratio((ms[i] ?? Number.NaN) / twenty) : '',
  ]);
  return [
    `Hook output cleared of secrets as it comes, median of ${runs} (in this process)`,
    '',
    table(['output', 'ms', '÷ no secret', '÷ 20,000 lines'], rows),
  ].join('\n');
}
