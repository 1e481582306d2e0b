// The HTTP bench's load generator: wrk where it is installed (apt-get install wrk), else
// autocannon. wrk, in C, spends a fraction of what a server spends on a request, so the
// server is the one at its limit; autocannon spends about as much as the server, and
// near that point every server looks alike: node:http, Fastify and berth within noise.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export interface Load {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The status every answer should have; the others are counted as wrong. */
  status: number;
  seconds: number;
  connections: number;
}

export interface Loaded {
  rps: number;
  requests: number;
  p99: number;
  wrong: number;
}

export interface LoadGenerator {
  name: string;
  run(load: Load): Promise<Loaded>;
}

export function loadGenerator(): LoadGenerator {
  const hasWrk = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  return hasWrk ? wrk : autocannonInProcess;
}

const autocannonInProcess: LoadGenerator = {
  name: 'autocannon in this process (wrk is not installed)',
  async run(load) {
    const result = await autocannon({
      url: load.url,
      method: load.method as 'POST',
      headers: load.headers,
      body: load.body,
      connections: load.connections,
      pipelining: 1,
      duration: load.seconds,
    });
    const key = `${Math.floor(load.status / 100)}xx` as '2xx' | '4xx';
    return {
      rps: result.requests.total / result.duration,
      requests: result.requests.total,
      p99: result.latency.p99,
      wrong: result.requests.total - result[key] + result.errors,
    };
  },
};

const wrk: LoadGenerator = {
  name: 'wrk, one thread',
  async run(load) {
    const dir = await mkdtemp(join(tmpdir(), 'berth-bench-wrk-'));
    try {
      const script = join(dir, 'load.lua');
      await writeFile(script, wrkScript(load));
      const out = await new Promise<string>((done, fail) =>
        execFile(
          'wrk',
          ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, '-s', script, load.url],
          (error, stdout, stderr) =>
            error ? fail(new Error(stderr || error.message)) : done(stdout),
        ),
      );
      const figure = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(out)?.[1]);
      const requests = figure('requests');
      return {
        rps: requests / figure('seconds'),
        requests,
        p99: figure('p99'),
        wrong: figure('wrong') + figure('errors'),
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/** A wrk script that sends the request and counts the answers whose status is not the one expected. */
function wrkScript(load: Load): string {
  const text = (value: string) => {
    if (!/^[\x20-\x7e]*$/.test(value)) throw new Error('wrk loads take printable ASCII only');
    return JSON.stringify(value); // with only \" and \\ escapes, also a Lua string
  };
  return [
    `wrk.method = ${text(load.method)}`,
    load.body === undefined ? '' : `wrk.body = ${text(load.body)}`,
    ...Object.entries(load.headers).map(([k, v]) => `wrk.headers[${text(k)}] = ${text(v)}`),
    'wrong = 0',
    `function response(status) if status ~= ${load.status} then wrong = wrong + 1 end end`,
    'local threads = {}',
    'function setup(thread) table.insert(threads, thread) end',
    'function done(summary, latency)',
    '  local wrong = 0',
    '  for _, thread in ipairs(threads) do wrong = wrong + thread:get("wrong") end',
    '  local e = summary.errors',
    '  io.write(string.format("requests %d\\nseconds %f\\np99 %f\\nwrong %d\\nerrors %d\\n",',
    '    summary.requests, summary.duration / 1e6, latency:percentile(99) / 1e3, wrong,',
    '    e.connect + e.read + e.write + e.timeout))',
    'end',
    '',
  ].join('\n');
}
