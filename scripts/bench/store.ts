import autocannon from 'autocannon';
import { ACCEPT_TOKEN } from './servers/answers.ts';
import { startScript } from './spawn-server.ts';
import { BERTH, fmt, log, median, ROOT, table, timeNode } from './stats.ts';
import { makeBenchWorld } from './world.ts';

/**
 * Store writes with fsync kept: acts per second, alternating assign and unassign of
 * one module, so that every act takes the lock, rewrites state.json atomically
 * (temporary file, fsync, rename, fsync of the directory) and appends to the journal (fsync).
 */
export async function benchStore(rounds: number, seconds: number): Promise<string> {
  const world = await makeBenchWorld(1);
  await world.writeState(1, 1);
  const rows: string[][] = [];
  try {
    log(`store writes: ${rounds} rounds of ${seconds}s each, file store, command line, API`);
    const direct: number[] = [];
    const cli: number[] = [];
    const api: number[] = [];
    const server = await startScript('berth app (test authenticator)', 'berth-accept.ts', {
      BENCH_STATE: world.state,
    });
    try {
      for (let round = 0; round < rounds; round++) {
        const timed = await timeNode(
          [
            '--import',
            'tsx',
            `${ROOT}/scripts/bench/store-direct.ts`,
            world.state,
            String(seconds),
          ],
          { timeoutMs: (seconds + 30) * 1000 },
        );
        if (timed.code !== 0) throw new Error(`the file store run failed: ${timed.stderr}`);
        direct.push(Number(timed.stdout.trim()));

        let acts = 0;
        const until = performance.now() + seconds * 1000;
        const started = performance.now();
        while (performance.now() < until) {
          const act = acts % 2 === 0 ? 'assign' : 'unassign';
          const run = await timeNode([BERTH, '--state', world.state, act, 'n0', 'extra']);
          if (run.code !== 0) throw new Error(`berth ${act} failed: ${run.stderr}`);
          acts++;
        }
        cli.push(acts / ((performance.now() - started) / 1000));

        const body = JSON.stringify({ node: 'n0', module: 'extra' });
        const result = await autocannon({
          url: `${server.url}/assign`,
          connections: 1,
          duration: seconds,
          requests: [
            {
              method: 'POST',
              path: '/assign',
              headers: {
                'Content-Type': 'application/json',
                Authorization: `Bearer ${ACCEPT_TOKEN}`,
              },
              body,
            },
            {
              method: 'POST',
              path: '/unassign',
              headers: {
                'Content-Type': 'application/json',
                Authorization: `Bearer ${ACCEPT_TOKEN}`,
              },
              body,
            },
          ],
        });
        api.push(result['2xx'] / result.duration);
      }
    } finally {
      await server.stop();
    }
    rows.push(['file store, in one process (open, act, close)', fmt(median(direct), 0)]);
    rows.push(['command line (a berth process per act)', fmt(median(cli), 1)]);
    rows.push(['Command API, one keep-alive connection', fmt(median(api), 0)]);
    return [
      `Store writes, fsync kept: assign and unassign alternating, each act locked, state.json rewritten atomically, journal appended; median of ${rounds} rounds of ${seconds}s`,
      '',
      table(['through', 'acts/s'], rows),
    ].join('\n');
  } finally {
    await world.cleanup();
  }
}
