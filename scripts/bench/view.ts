// berth view's survey of 50 rooted nodes × 5 modules (its button: a converge preview of
// @all, then the fleet page), against `berth converge @all --json` on the same state from
// its start; the fleet page alone (it reads the kept surveys, running nothing); and the
// memory of each (the view's resident set after the rounds, the command's peak).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BERTH, cleanEnv, fmt, log, median, ratioSpread, table, timeNode } from './stats.ts';

const NODES = 50;
const MODULES = 5;

/** 50 rooted nodes, each to run m0…m4 (two files and a secret each), converged; every fifth drifted. */
async function makeViewWorld() {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-view-'));
  const state = join(dir, 'state');
  await mkdir(join(state, 'modules'), { recursive: true });
  const modules = Array.from({ length: MODULES }, (_, i) => `m${i}`);
  for (const module of modules)
    await writeFile(
      join(state, 'modules', `${module}.json`),
      JSON.stringify({
        description: `module ${module}`,
        data: [`/var/lib/${module}`],
        secrets: { key: { path: `/etc/${module}/key` } },
        files: {
          [`/etc/${module}/main.conf`]: {
            mode: '0640',
            content: `key={{secret key}}\n${Array.from({ length: 40 }, (_, i) => `setting${i}=${i}`).join('\n')}\n`,
          },
          [`/etc/${module}/extra.conf`]: { content: 'extra=1\n' },
        },
      }),
    );
  const names = Array.from({ length: NODES }, (_, i) => `n${i}`);
  const nodes = Object.fromEntries(names.map((name) => [name, { root: join(dir, 'roots', name) }]));
  for (const { root } of Object.values(nodes)) await mkdir(root, { recursive: true });
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({ nodes, groups: { fleet: names }, run: { '@fleet': modules } }),
  );
  const preview = await berth(state, ['converge', '@all']);
  const digest = /digest ([0-9a-f]{64})\s*$/.exec(preview.stdout)?.[1] ?? '';
  await berth(state, ['converge', '@all', '--yes', '--digest', digest]);
  for (const [index, name] of names.entries()) {
    if (index % 5 !== 0) continue;
    const path = join(dir, 'roots', name, 'etc/m0/main.conf');
    await writeFile(path, (await readFile(path, 'utf8')).replace('setting7=7', 'setting7=70'));
  }
  return { state, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

async function berth(state: string, args: string[], usage = false) {
  const run = await timeNode([BERTH, '--state', state, ...args], { usage, timeoutMs: 600_000 });
  if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
  return run;
}

/**
 * One request to the view at 127.0.0.1:`port` under its own name (`host`): Node resolves
 * no `.localhost` name, as browsers do.
 */
function ask(
  port: number,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}> {
  return new Promise((resolve, reject) => {
    const asked = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        headers: { host, ...init.headers },
      },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        answer.on('end', () =>
          resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body }),
        );
      },
    );
    asked.on('error', reject);
    asked.end(init.body);
  });
}

/** `berth view` on a free port: how to ask it (with its cookie), its pid, and how to stop it. */
async function startView(state: string) {
  const child = spawn(
    process.execPath,
    [BERTH, '--state', state, 'view', '--listen', '127.0.0.1:0'],
    { env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const found = /^http:\/\/\S+\?token=\S+$/m.exec(out);
      if (found) resolve(found[0]);
    });
    child.once('exit', (code) => reject(new Error(`berth view ended (${code}): ${out}`)));
  });
  const url = new URL(address);
  const port = Number(url.port);
  const first = await ask(port, url.host, `${url.pathname}${url.search}`);
  const cookie = String(first.headers['set-cookie'] ?? '').split(';')[0] as string;
  const page = (path: string) => ask(port, url.host, path, { headers: { cookie } });
  const token = /name="check" value="([\w-]+)"/.exec((await page('/')).body)?.[1] ?? '';
  return {
    page,
    /** A survey of the fleet as the page's button asks it. */
    survey: () =>
      ask(port, url.host, '/survey', {
        method: 'POST',
        headers: {
          cookie,
          origin: url.origin,
          'sec-fetch-site': 'same-origin',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: `check=${token}`,
      }),
    pid: child.pid as number,
    stop: () => child.kill('SIGTERM'),
  };
}

/** A process's resident set and its peak so far, in MiB, from /proc. */
async function residentMiB(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

export async function benchView(rounds: number): Promise<string> {
  const world = await makeViewWorld();
  const view = await startView(world.state);
  try {
    log(`view: a survey of ${NODES} nodes × ${MODULES} modules, and its page, ${rounds} rounds`);
    const page = async () => {
      const started = performance.now();
      const answer = await view.page('/');
      if (answer.status !== 200 || !answer.body.includes('to update'))
        throw new Error(`the fleet page answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      return { ms: performance.now() - started, bytes: answer.body.length };
    };
    /** The button, as the browser follows it: the survey, then the page it is sent back to. */
    const surveyed = async () => {
      const started = performance.now();
      const answer = await view.survey();
      if (answer.status !== 303)
        throw new Error(`the survey answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      const drawn = await page();
      return { ms: performance.now() - started, bytes: drawn.bytes };
    };
    // The first survey loads the view's code and warms the survey's: not a round.
    const first = await surveyed();
    const surveys: number[] = [];
    const pages: number[] = [];
    const commands: number[] = [];
    const ratios: number[] = [];
    const peaks: number[] = [];
    let bytes = 0;
    for (let round = 0; round < rounds; round++) {
      const made = await surveyed();
      pages.push((await page()).ms);
      const command = await berth(world.state, ['converge', '@all', '--json'], true);
      surveys.push(made.ms);
      commands.push(command.ms);
      ratios.push(made.ms / command.ms);
      peaks.push(command.rssMiB ?? Number.NaN);
      bytes = made.bytes;
    }
    const memory = await residentMiB(view.pid);
    return [
      `### view: a survey of ${NODES} rooted nodes × ${MODULES} modules, and its page (${rounds} rounds)`,
      '',
      table(
        ['what', 'median ms', 'memory MiB'],
        [
          ['survey and page, first after the start', fmt(first.ms), '—'],
          [
            'survey (the button) and page on a running view',
            fmt(median(surveys)),
            `${fmt(memory.rss)} resident after, ${fmt(memory.peak)} peak`,
          ],
          ['the fleet page alone (reads the kept surveys)', fmt(median(pages)), '—'],
          [
            'berth converge @all --json, from its start',
            fmt(median(commands)),
            `${fmt(median(peaks))} peak`,
          ],
        ],
      ),
      '',
      `survey ÷ command: ${ratioSpread(ratios)} (goal ≤ 1.5×); the page is ${fmt(bytes / 1024)} KiB`,
    ].join('\n');
  } finally {
    view.stop();
    await world.cleanup();
  }
}
