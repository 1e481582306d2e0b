// The seams, measured: a fleet converged at once, an act's cost against the size of the
// state, and API acts on many nodes against the file system's own cost of an act's writes.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, onServerCore, pinLoadGenerator } from './cores.ts';
import { post } from './post.ts';
import { ACCEPT_TOKEN } from './servers/answers.ts';
import { type Running, startScript } from './spawn-server.ts';
import { BERTH, cleanEnv, fmt, log, median, ROOT, ratio, table, timeNode } from './stats.ts';

/** A request to the bench's server, which accepts the bench's token. */
const send = (url: string, path: string, body: unknown, agent: Agent) =>
  post(url, path, JSON.stringify(body), agent, ACCEPT_TOKEN);

/** A state directory whose berth.json knows `nodes` nodes n0…, each rooted in a directory of its own. */
async function makeFleet(nodes: number, modules: Record<string, unknown>, rootEach = true) {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-seams-'));
  const state = join(dir, 'state');
  await mkdir(join(state, 'modules'), { recursive: true });
  const inventory: Record<string, { root: string }> = {};
  for (let i = 0; i < nodes; i++) {
    const root = join(dir, 'roots', rootEach ? `n${i}` : 'shared');
    if (rootEach || i === 0) await mkdir(root, { recursive: true });
    inventory[`n${i}`] = { root };
  }
  await writeFile(join(state, 'berth.json'), JSON.stringify({ nodes: inventory }));
  for (const [name, definition] of Object.entries(modules))
    await writeFile(join(state, 'modules', `${name}.json`), JSON.stringify(definition));
  return { dir, state, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes node records directly, as the file store keeps them, `batch` at a time. */
async function writeRecords(state: string, nodes: number, record: unknown, batch = 512) {
  const text = `${JSON.stringify(record, null, 1)}\n`;
  for (let start = 0; start < nodes; start += batch) {
    const end = Math.min(nodes, start + batch);
    const writes: Promise<void>[] = [];
    for (let i = start; i < end; i++) {
      const here = join(state, 'nodes', `n${i}`);
      writes.push(
        mkdir(here, { recursive: true, mode: 0o700 }).then(() =>
          writeFile(join(here, 'record.json'), text, { mode: 0o600 }),
        ),
      );
    }
    await Promise.all(writes);
  }
}

const digestOf = (said = '') => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

/**
 * (a) Twenty nodes converged at once, each start hook `sleep 2`: twenty `berth converge
 * --yes` processes, and twenty requests to one API server, against one such converge alone.
 */
export async function benchFleet(rounds: number): Promise<string> {
  const NODES = 20;
  const fleet = await makeFleet(NODES, { slow: { description: 'sleeps', start: 'sleep 2' } });
  const fresh = { assigned: ['slow'], managed: {} };
  const agent = new Agent({ keepAlive: true, maxSockets: NODES });
  let server: Running | undefined;
  try {
    log(`fleet: ${NODES} nodes converged at once, start hooks of 2 s, ${rounds} rounds`);
    await writeRecords(fleet.state, NODES, fresh);
    server = await startScript('berth app (test authenticator)', 'berth-accept.ts', {
      BENCH_STATE: fleet.state,
    });
    const url = server.url;
    // Previews, not timed: each node's digest (the records are put back the same each round).
    const digests = await Promise.all(
      Array.from({ length: NODES }, async (_, i) => {
        const answer = await send(url, '/converge', { node: `n${i}` }, agent);
        const digest = digestOf(answer.body.said);
        if (answer.status !== 200 || !digest)
          throw new Error(`preview of n${i}: ${answer.body.refused}`);
        return digest;
      }),
    );
    const cli = (i: number) =>
      timeNode([
        BERTH,
        '--state',
        fleet.state,
        'converge',
        `n${i}`,
        '--yes',
        '--digest',
        digests[i] as string,
      ]).then((run) => {
        if (run.code !== 0) throw new Error(`berth converge n${i}: ${run.stderr}`);
      });
    const api = (i: number) =>
      send(url, '/converge', { node: `n${i}`, yes: true, digest: digests[i] }, agent).then(
        (answer) => {
          if (answer.status !== 200)
            throw new Error(`API converge n${i}: ${answer.status} ${answer.body.refused}`);
        },
      );
    const wall = async (acts: () => Promise<unknown>) => {
      await writeRecords(fleet.state, NODES, fresh);
      const started = performance.now();
      await acts();
      return performance.now() - started;
    };
    const samples = {
      cliOne: [] as number[],
      cliAll: [] as number[],
      apiOne: [] as number[],
      apiAll: [] as number[],
    };
    const all = (act: (i: number) => Promise<void>) => () =>
      Promise.all(Array.from({ length: NODES }, (_, i) => act(i)));
    for (let round = 0; round < rounds; round++) {
      samples.cliOne.push(await wall(() => cli(0)));
      samples.cliAll.push(await wall(all(cli)));
      samples.apiOne.push(await wall(() => api(0)));
      samples.apiAll.push(await wall(all(api)));
    }
    const row = (through: string, one: number[], many: number[]) => [
      through,
      fmt(median(one), 0),
      fmt(median(many), 0),
      ratio(median(many) / median(one)),
    ];
    return [
      `Fleet: ${NODES} nodes converged at once, each start hook sleep 2, against one such converge alone; median of ${rounds} rounds (goal ≤ 1.5×)`,
      '',
      table(
        ['through', 'one node, ms', `${NODES} nodes at once, ms`, 'ratio'],
        [
          row(
            `command line (${NODES} berth converge --yes processes)`,
            samples.cliOne,
            samples.cliAll,
          ),
          row(`Command API (${NODES} requests to one server)`, samples.apiOne, samples.apiAll),
        ],
      ),
    ].join('\n');
  } finally {
    agent.destroy();
    await server?.stop();
    await fleet.cleanup();
  }
}

/** The files an act on n0 may write: the state directory's own, and n0's. */
async function writtenFiles(state: string) {
  const files = new Map<string, { size: number; ino: number; mtimeMs: number }>();
  for (const dir of [state, join(state, 'nodes', 'n0')]) {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isFile() || entry.name === 'berth.json') continue;
      const info = await stat(join(dir, entry.name));
      files.set(join(dir, entry.name), { size: info.size, ino: info.ino, mtimeMs: info.mtimeMs });
    }
  }
  return files;
}

/**
 * Runs the binary: wall ms, and the bytes it left written in the state directory — each
 * file replaced counted whole, each journal by what was appended (its lock file, made
 * and removed, is not counted).
 */
async function timedWrites(state: string, args: string[]) {
  const before = await writtenFiles(state);
  const run = await timeNode([BERTH, '--state', state, ...args], {
    usage: true,
    timeoutMs: 300_000,
  });
  if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr}`);
  let bytes = 0;
  for (const [path, now] of await writtenFiles(state)) {
    const was = before.get(path);
    if (was && was.ino === now.ino && was.mtimeMs === now.mtimeMs) continue;
    bytes += path.endsWith('.jsonl') && was?.ino === now.ino ? now.size - was.size : now.size;
  }
  return { ms: run.ms, cpuMs: run.cpuMs ?? Number.NaN, bytes };
}

/**
 * (b) An act and a read on one node at 1,000, 100,000 and 1,000,000 assignments (100,
 * 10,000 and 100,000 nodes × 10 modules), the node records written directly: wall time,
 * and the bytes left written in the state; and the first open of each state, which
 * searches every node's directory once for a vault an earlier berth left unsealed.
 */
export async function benchBigState(sizes: readonly number[], runs: number): Promise<string> {
  const MODULES = 10;
  const modules = Array.from({ length: MODULES }, (_, i) => `m${i}`);
  const catalog = Object.fromEntries(
    [...modules, 'extra'].map((name) => [name, { description: `bench module ${name}` }]),
  );
  const record = { assigned: modules, managed: {} };
  const results: {
    size: number;
    assign: ReturnType<typeof summary>;
    status: ReturnType<typeof summary>;
    first: Sample;
  }[] = [];
  type Sample = Awaited<ReturnType<typeof timedWrites>>;
  const summary = (samples: Sample[]) => ({
    ms: median(samples.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    bytes: median(samples.map((s) => s.bytes)),
  });
  for (const size of sizes) {
    const nodes = size / MODULES;
    log(`big state: ${fmt(size)} assignments (${fmt(nodes)} nodes), ${runs} runs`);
    const fleet = await makeFleet(nodes, catalog, false);
    try {
      await writeRecords(fleet.state, nodes, record);
      // The first open of a state directory is shown apart.
      const first = await timedWrites(fleet.state, ['status', 'n0']);
      const assign: Sample[] = [];
      const status: Sample[] = [];
      for (let run = 0; run < runs; run++) {
        await writeRecords(fleet.state, 1, record);
        assign.push(await timedWrites(fleet.state, ['assign', 'n0', 'extra']));
        status.push(await timedWrites(fleet.state, ['status', 'n0']));
      }
      results.push({ size, assign: summary(assign), status: summary(status), first });
    } finally {
      await fleet.cleanup();
    }
  }
  const [small] = results;
  const rows: string[][] = [];
  for (const name of ['assign', 'status'] as const) {
    for (const result of results) {
      const figures = result[name];
      const growth =
        small && result !== small
          ? `${ratio(figures.ms / small[name].ms)} (CPU ${ratio(figures.cpuMs / small[name].cpuMs)}) for ${fmt(result.size / small.size)}× the state`
          : '';
      rows.push([
        name === 'assign' ? 'assign n0 extra' : 'status n0',
        fmt(result.size),
        fmt(figures.ms, 0),
        fmt(figures.cpuMs, 0),
        fmt(figures.bytes),
        growth,
      ]);
    }
  }
  for (const result of results)
    rows.push([
      'status n0, first open of the state',
      fmt(result.size),
      fmt(result.first.ms, 0),
      fmt(result.first.cpuMs, 0),
      '',
      '',
    ]);
  return [
    `Big state: nodes × ${MODULES} modules, each node's record written directly; median of ${runs} runs; bytes written are what the command left in the state directory: files replaced, whole, and journal lines appended (goal ≤ 1.5× at 10,000 nodes against 100, ≤ 2× at 1,000× the state); CPU is the process's, all threads' (steadier than wall time on a busy machine); the first open, once, is not counted in the medians`,
    '',
    table(['command', 'assignments', 'ms', 'CPU ms', 'bytes written', 'growth'], rows),
  ].join('\n');
}

/**
 * (c) API acts on 16 nodes from 16 keep-alive clients, assign and unassign alternating,
 * against 16 loops of berth's own write pattern on the server's core, in the same run.
 */
export async function benchApiActs(rounds: number, seconds: number): Promise<string> {
  // The pattern has the server's core to itself; so has the server: its clients are elsewhere.
  const pinning = pinLoadGenerator();
  try {
    return await measureApiActs(rounds, seconds, pinning.where);
  } finally {
    pinning.release();
  }
}

async function measureApiActs(rounds: number, seconds: number, where: string): Promise<string> {
  const CLIENTS = 16;
  const fleet = await makeFleet(CLIENTS, { extra: { description: 'bench module extra' } });
  let server: Running | undefined;
  const apiRates: number[] = [];
  const baseRates: number[] = [];
  const lockedRates: number[] = [];
  const cpuPerAct: number[] = [];
  try {
    log(`API acts: ${CLIENTS} clients on ${CLIENTS} nodes, ${rounds} rounds of ${seconds}s`);
    await writeRecords(fleet.state, CLIENTS, { assigned: [], managed: {} });
    server = await startScript('berth app (test authenticator)', 'berth-accept.ts', {
      BENCH_STATE: fleet.state,
    });
    const url = server.url;
    const pid = server.pid;
    const base = join(fleet.dir, 'pattern');
    for (let round = 0; round < rounds; round++) {
      // The file system's own cost: the same loops of an act's writes, on the server's core;
      // then with a lock file made and removed in each, as berth's lock does.
      const runPattern = (...extra: string[]) => {
        const pinned = onServerCore([
          '--import',
          'tsx',
          join(ROOT, 'scripts/bench/write-pattern.ts'),
          join(base, `round${round}${extra.join('')}`),
          String(CLIENTS),
          String(seconds),
          ...extra,
        ]);
        return new Promise<number>((done, fail) => {
          execFile(pinned.command, pinned.args, { cwd: ROOT, env: cleanEnv() }, (error, stdout) =>
            error ? fail(error) : done(Number(stdout.trim())),
          );
        });
      };
      const rate = await runPattern();
      baseRates.push(rate);
      lockedRates.push((await runPattern('lock')) / rate);

      let acts = 0;
      const cpuBefore = cpuMs(pid);
      const until = performance.now() + seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, i) => {
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            for (let n = 0; performance.now() < until; n++) {
              const act = n % 2 === 0 ? '/assign' : '/unassign';
              const answer = await send(url, act, { node: `n${i}`, module: 'extra' }, agent);
              if (answer.status !== 200)
                throw new Error(`${act} n${i}: ${answer.status} ${answer.body.refused}`);
              acts++;
            }
          } finally {
            agent.destroy();
          }
        }),
      );
      apiRates.push(acts / ((performance.now() - started) / 1000));
      cpuPerAct.push((cpuMs(pid) - cpuBefore) / acts);
    }
    const api = median(apiRates);
    const pattern = median(baseRates);
    return [
      `API acts: ${CLIENTS} keep-alive clients, each on a node of its own, assign and unassign alternating, against ${CLIENTS} loops at once of berth's write pattern, in a process on the server's core (temporary file, fsync, rename, directory fsync, journal append and fsync); ${where}; median of ${rounds} rounds of ${seconds}s (goal ≥ 0.6×); the lock file's row is the pattern's rate times its ratio to the pattern in each round`,
      '',
      table(
        ['through', 'acts/s', 'server CPU ms per act', 'ratio'],
        [
          [
            `Command API, ${CLIENTS} clients on ${CLIENTS} nodes`,
            fmt(api, 0),
            fmt(median(cpuPerAct), 2),
            ratio(api / pattern),
          ],
          [`write pattern alone, ${CLIENTS} loops`, fmt(pattern, 0), '', '1.00×'],
          [
            `write pattern with a lock file made and removed, ${CLIENTS} loops`,
            fmt(pattern * median(lockedRates), 0),
            '',
            ratio(median(lockedRates)),
          ],
        ],
      ),
    ].join('\n');
  } finally {
    await server?.stop();
    await fleet.cleanup();
  }
}

/** The sections as `npm run bench` runs them: the full runs, or a short pass with --quick. */
export const fleet = (quick: boolean) => benchFleet(quick ? 1 : 3);
export const bigState = (quick: boolean) =>
  benchBigState(quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000], quick ? 1 : 5);
export const apiActs = (quick: boolean) => benchApiActs(quick ? 1 : 3, quick ? 1 : 3);
