import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countingCopy, readEvaluated } from '../../tests/helpers/evaluated.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, table, timeNode } from './stats.ts';
import { makeBenchWorld } from './world.ts';

/**
 * Command-line cold start: wall time from spawn to exit, against `node -e 0`, the
 * floor for any Node program here. Runs are interleaved; each figure is a median.
 */
export async function benchColdStart(runs: number): Promise<string> {
  const world = await makeBenchWorld(1);
  await world.writeState(1, 1);
  const state = ['--state', world.state];
  const cases: [string, string[]][] = [
    ['node -e 0', ['-e', '0']],
    ['berth --version', [BERTH, '--version']],
    ['berth status', [BERTH, ...state, 'status']],
    ['berth completion bash', [BERTH, 'completion', 'bash']],
    // What a shell runs at each Tab: the candidates for `berth assign <Tab>`.
    ['berth __complete assign (a Tab)', [BERTH, '__complete', ...state, 'assign', '']],
    ['berth assign n0 m0 (already; journaled, fsync)', [BERTH, ...state, 'assign', 'n0', 'm0']],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  try {
    log(`cold start: ${cases.length} commands × ${runs} runs`);
    for (let run = 0; run < runs; run++) {
      for (const [name, args] of cases) {
        const timed = await timeNode(args);
        if (timed.code !== 0) throw new Error(`${name} failed (${timed.code}): ${timed.stderr}`);
        times.get(name)?.push(timed.ms);
      }
    }
    const floor = median(times.get('node -e 0') ?? []);
    const loaded = await whatEachCommandLoads(world.state);
    const rows = cases.map(([name]) => {
      const ms = median(times.get(name) ?? []);
      return [name, fmt(ms, 1), ratio(ms / floor), loaded.get(name) ?? ''];
    });
    rows.push(['berth api (until it serves)', '', '', loaded.get('berth api') ?? '']);
    return [
      `Cold start, wall time spawn → exit, median of ${runs} interleaved runs (NODE_EXTRA_CA_CERTS unset)`,
      '',
      table(['command', 'ms', '÷ node -e 0', 'what it evaluates'], rows),
    ].join('\n');
  } finally {
    await world.cleanup();
  }
}

/**
 * Which of the bundle's lazily wrapped modules each command evaluates, and whether
 * it loads Node's HTTP stack: a copy of dist/berth.mjs counts them (tests/helpers/evaluated.ts).
 */
async function whatEachCommandLoads(state: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-count-'));
  try {
    const copy = await countingCopy(BERTH, dir);
    const out = join(dir, 'evaluated.json');
    const env = cleanEnv({ BERTH_EVALUATED: out });
    const describe = async () => {
      const { modules, total, builtins } = await readEvaluated(out);
      const has = (name: string) => builtins.includes(`NativeModule ${name}`);
      const http = modules.some((key) => key.includes('hono')) || has('http');
      return `${modules.length} of ${total} wrapped modules; HTTP stack ${http ? 'loaded' : 'not loaded'}; node:crypto ${has('crypto') ? 'loaded' : 'not loaded'}`;
    };
    const args: [string, string[]][] = [
      ['berth --version', ['--version']],
      ['berth status', ['--state', state, 'status']],
      ['berth assign n0 m0 (already; journaled, fsync)', ['--state', state, 'assign', 'n0', 'm0']],
    ];
    for (const [name, rest] of args) {
      await timeNode([copy, ...rest], { env });
      found.set(name, await describe());
    }
    await new Promise<void>((done) => {
      const child = spawn(
        process.execPath,
        [
          copy,
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
