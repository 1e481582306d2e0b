import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { childrenCpuMs } from './cores.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, ratioSpread, table, timeNode } from './stats.ts';
import { makeBenchWorld } from './world.ts';

/**
 * Command-line cold start against `node -e 0`, the floor for any Node program here: wall
 * time from spawn to exit, and CPU time (user and system, the child's own). Runs are
 * interleaved, each command's run beside a run of the floor: a wall ratio is taken within
 * each run (the median, and the middle half), the CPU ratio is of the totals over the runs.
 * Another build's dist/berth.mjs (BENCH_BERTH_BEFORE) runs `--version` and `status` in the
 * same runs: what a change cost, on the same machine at the same load.
 */
export async function benchColdStart(runs: number): Promise<string> {
  const world = await makeBenchWorld(1);
  await world.writeState(1, 1);
  const state = ['--state', world.state];
  // What any program shipped as an ES module pays before its first line: Node's ES loader.
  const empty = join(world.dir, 'empty.mjs');
  await writeFile(empty, '');
  const before = process.env.BENCH_BERTH_BEFORE;
  const cases: [string, string[]][] = [
    ['node -e 0', ['-e', '0']],
    ['node empty.mjs (an empty ES module)', [empty]],
    ['berth --version', [BERTH, '--version']],
    ['berth status', [BERTH, ...state, 'status']],
    ...(before
      ? ([
          ['berth --version (before)', [before, '--version']],
          ['berth status (before)', [before, ...state, 'status']],
        ] as [string, string[]][])
      : []),
    ['berth completion bash', [BERTH, 'completion', 'bash']],
    // What a shell runs at each Tab: the candidates for `berth assign <Tab>`.
    ['berth __complete assign (a Tab)', [BERTH, '__complete', ...state, 'assign', '']],
    ['berth assign n0 m0 (already; journaled, fsync)', [BERTH, ...state, 'assign', 'n0', 'm0']],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  const cpu = new Map<string, number>(cases.map(([name]) => [name, 0]));
  try {
    log(`cold start: ${cases.length} commands × ${runs} runs`);
    for (let run = 0; run < runs; run++) {
      for (const [name, args] of cases) {
        const before = childrenCpuMs();
        const timed = await timeNode(args);
        if (timed.code !== 0) throw new Error(`${name} failed (${timed.code}): ${timed.stderr}`);
        times.get(name)?.push(timed.ms);
        cpu.set(name, (cpu.get(name) ?? 0) + childrenCpuMs() - before);
      }
    }
    const floor = times.get('node -e 0') ?? [];
    const floorCpu = cpu.get('node -e 0') ?? Number.NaN;
    const loaded = await whatEachCommandLoads(world.state, BERTH);
    if (before)
      for (const [name, found] of await whatEachCommandLoads(world.state, before))
        loaded.set(`${name} (before)`, found);
    const rows = cases.map(([name]) => {
      const mine = times.get(name) ?? [];
      const paired = name === 'node -e 0' ? [] : mine.map((ms, i) => ms / (floor[i] ?? Number.NaN));
      const cpuMs = cpu.get(name) ?? Number.NaN;
      return [
        name,
        fmt(median(mine), 1),
        name === 'node -e 0' ? '' : ratioSpread(paired),
        fmt(cpuMs / runs, 1),
        name === 'node -e 0' ? '' : ratio(cpuMs / floorCpu),
        loaded.get(name) ?? '',
      ];
    });
    rows.push(['berth api (until it serves)', '', '', '', '', loaded.get('berth api') ?? '']);
    return [
      `Cold start, ${runs} interleaved runs (NODE_EXTRA_CA_CERTS unset): wall time spawn → exit, the median, and its ratio taken within each run (the median, and the middle half); CPU time (user and system) a run, and its ratio of the totals`,
      '',
      table(['command', 'ms', '÷ node -e 0', 'CPU ms', 'CPU ÷ node -e 0', 'what it loads'], rows),
    ].join('\n');
  } finally {
    await world.cleanup();
  }
}

/**
 * Which files of `binary`'s dist/ each command loads (a loader hook records them), and
 * whether it loads Node's HTTP stack and node:crypto (a preload records Node's modules as it
 * exits).
 */
async function whatEachCommandLoads(state: string, binary: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-loads-'));
  try {
    const files = join(dir, 'files.txt');
    const builtins = join(dir, 'builtins.json');
    await writeFile(
      join(dir, 'hooks.mjs'),
      [
        "import { appendFileSync } from 'node:fs';",
        'export async function load(url, context, next) {',
        `  if (url.startsWith(${JSON.stringify(pathToFileURL(dirname(binary)).href)}))`,
        `    appendFileSync(${JSON.stringify(files)}, url + '\\n');`,
        '  return next(url, context);',
        '}',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'record.mjs'),
      [
        "import { writeFileSync } from 'node:fs';",
        "import { register } from 'node:module';",
        "register('./hooks.mjs', import.meta.url);",
        `process.on('exit', () => writeFileSync(${JSON.stringify(builtins)}, JSON.stringify(process.moduleLoadList)));`,
      ].join('\n'),
    );
    const total = (await readdir(dirname(binary), { recursive: true })).filter((name) =>
      name.endsWith('.mjs'),
    ).length;
    const env = cleanEnv({ NODE_OPTIONS: `--import ${join(dir, 'record.mjs')}` });
    const describe = async () => {
      const loaded = (await readFile(files, 'utf8')).trim().split('\n').length;
      const list = JSON.parse(await readFile(builtins, 'utf8')) as string[];
      const has = (name: string) => list.includes(`NativeModule ${name}`);
      await rm(files, { force: true });
      return `${loaded} of ${total} files; HTTP stack ${has('http') ? 'loaded' : 'not loaded'}; node:crypto ${has('crypto') ? 'loaded' : 'not loaded'}`;
    };
    const args: [string, string[]][] = [
      ['berth --version', ['--version']],
      ['berth status', ['--state', state, 'status']],
      ['berth assign n0 m0 (already; journaled, fsync)', ['--state', state, 'assign', 'n0', 'm0']],
    ];
    for (const [name, rest] of args) {
      await timeNode([binary, ...rest], { env });
      found.set(name, await describe());
    }
    await new Promise<void>((done) => {
      const child = spawn(
        process.execPath,
        [
          binary,
          'api',
          '--state',
          state,
          '--listen',
          '127.0.0.1:0',
          '--issuer',
          'http://127.0.0.1:1',
        ],
        { env, stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.stdout.on('data', (chunk: Buffer) => {
        if (String(chunk).includes('every route')) child.kill('SIGTERM');
      });
      child.on('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
    found.set('berth api', await describe().catch(() => ''));
    return found;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
