// Teams: acts per second through the Command API on the PostgreSQL store, beside the file
// store in the same run; and two controllers (two `berth api`) on one database.
import { Agent } from 'node:http';
import { cpus } from 'node:os';
import { postgresUnavailable, startPostgres } from '../../tests/helpers/postgres-server.ts';
import { cpuMs } from './cores.ts';
import { startIssuer } from './issuer.ts';
import { post } from './post.ts';
import { type Running, startBerthApi } from './spawn-server.ts';
import { fmt, log, median, ratio, table } from './stats.ts';
import { makeBenchWorld, nodeName } from './world.ts';

const CLIENTS = 16;

interface Round {
  perSecond: number;
  latencies: number[];
  /** The CPU time the berth api processes spent, per act, in milliseconds. */
  cpuPerAct: number;
}

/**
 * CLIENTS keep-alive clients, each on a node of its own, alternating assign and unassign
 * of `extra` for `seconds`; client c goes to `urls[c % urls.length]`.
 */
async function load(apis: Running[], token: string, seconds: number): Promise<Round> {
  const urls = apis.map((api) => api.url);
  const cpu = () => apis.reduce((sum, api) => sum + cpuMs(api.pid), 0);
  const cpuBefore = cpu();
  const latencies: number[] = [];
  let acts = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const url = urls[c % urls.length] as string;
      const body = JSON.stringify({ node: nodeName(c), module: 'extra' });
      let n = 0;
      try {
        while (performance.now() < until) {
          const began = performance.now();
          const { status } = await post(
            url,
            n % 2 === 0 ? '/assign' : '/unassign',
            body,
            agent,
            token,
          );
          if (status !== 200) throw new Error(`an act on ${nodeName(c)} answered ${status}`);
          latencies.push(performance.now() - began);
          acts++;
          n++;
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  return {
    perSecond: acts / ((performance.now() - started) / 1000),
    latencies,
    cpuPerAct: (cpu() - cpuBefore) / acts,
  };
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/**
 * The file store, the PostgreSQL store with one controller, and with two, each measured
 * `rounds` times in turn, `seconds` each; the ratios are of medians from the same run.
 */
export async function benchTeams(rounds: number, seconds: number): Promise<string> {
  const title = `Teams: acts/s through the Command API, ${CLIENTS} keep-alive clients each on a node of its own (assign and unassign alternating), PostgreSQL store beside the file store; median of ${rounds} rounds of ${seconds}s`;
  const unavailable = postgresUnavailable();
  if (unavailable) return `${title}\n\nskipped: ${unavailable}`;
  const world = await makeBenchWorld(CLIENTS);
  const server = await startPostgres();
  const issuer = await startIssuer();
  const apis: Running[] = [];
  try {
    const token = issuer.token({ sub: 'bench', aud: 'berth' });
    const store = { BERTH_STORE: server.url };
    log(`teams: ${rounds} rounds of ${seconds}s: file store, PostgreSQL, two controllers`);
    const start = (name: string, env: Record<string, string>) =>
      startBerthApi(name, world.state, issuer.url, { env, pinned: false });
    const file = await start('berth api (file store)', {});
    const pgOne = await start('berth api (PostgreSQL, one)', store);
    const pgTwo = await start('berth api (PostgreSQL, two)', store);
    apis.push(file, pgOne, pgTwo);
    // Warm each: keys fetched, the schema made, connections opened.
    await load([file], token, 1);
    await load([pgOne, pgTwo], token, 1);
    const runs = { file: [] as Round[], one: [] as Round[], two: [] as Round[] };
    for (let round = 0; round < rounds; round++) {
      runs.file.push(await load([file], token, seconds));
      runs.one.push(await load([pgOne], token, seconds));
      runs.two.push(await load([pgOne, pgTwo], token, seconds));
    }
    const rate = (of: Round[]) => median(of.map((item) => item.perSecond));
    const p = (of: Round[], at: number) =>
      percentile(
        of.flatMap((item) => item.latencies),
        at,
      );
    const rows = [
      ['file store, one berth api', runs.file],
      ['PostgreSQL, one berth api', runs.one],
      ['PostgreSQL, two berth api (8 clients each)', runs.two],
    ].map(([name, of]) => [
      name as string,
      fmt(rate(of as Round[]), 0),
      fmt(p(of as Round[], 50), 1),
      fmt(p(of as Round[], 99), 1),
      fmt(median((of as Round[]).map((item) => item.cpuPerAct)), 2),
    ]);
    const perRound = (a: Round[], b: Round[]) =>
      median(a.map((item, index) => item.perSecond / (b[index]?.perSecond ?? Number.NaN)));
    return [
      title,
      '',
      table(['through', 'acts/s', 'p50 ms', 'p99 ms', 'berth api CPU ms/act'], rows),
      '',
      `PostgreSQL ÷ file store, one controller: ${ratio(perRound(runs.one, runs.file))} (median of per-round ratios)`,
      `two controllers ÷ one, PostgreSQL: ${ratio(perRound(runs.two, runs.one))}`,
      `(${cpus().length} cores for the load, every berth api and PostgreSQL: where they are all busy, a second controller adds no CPU to share)`,
    ].join('\n');
  } finally {
    await Promise.all(apis.map((api) => api.stop()));
    await issuer.close();
    await server.stop();
    await world.cleanup();
  }
}
