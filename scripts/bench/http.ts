import { connect, createServer } from 'node:net';
import { cpuMs, pinLoadGenerator } from './cores.ts';
import { startIssuer } from './issuer.ts';
import { type LoadGenerator, loadGenerator } from './load.ts';
import { pipelinedCpuUs } from './pipelined.ts';
import { ACCEPT_TOKEN, type Answer, type Answers } from './servers/answers.ts';
import { type Running, startBerthApi, startScript } from './spawn-server.ts';
import { fmt, log, median, ratioSpread, table } from './stats.ts';
import { makeBenchWorld } from './world.ts';

export interface HttpOptions {
  /** Paired rounds for each path the goals name (the 404 and the two 401s). */
  rounds: number;
  /** Paired rounds for the 400 and 200 paths, which no goal names: at the first count only. */
  sideRounds: number;
  seconds: number;
  /** The connection counts, each a table; the servers are started once for all. */
  connections: readonly number[];
}

type Server = 'node:http' | 'Fastify' | 'Hono' | 'berth' | 'berth before';

interface Target {
  path: string;
  server: Server;
  running: Running;
  method: 'POST';
  route: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
  /** The goals' paths are measured at every connection count, the others at the first. */
  goal: boolean;
}

interface Sample {
  rps: number;
  p99: number;
  /** The server's CPU time per answer, in microseconds. */
  cpuUs: number;
  wrong: number;
}

const ASSIGN = JSON.stringify({ node: 'n0', module: 'm0' });

/**
 * HTTP throughput and p99 latency, keep-alive, one load generator process (wrk, or
 * autocannon in this one) against one server process at a time, at each connection count.
 * Path by path, every server is run once per round, in turn, the order turned by one each
 * round, so that a slow moment on the machine hits all of them; a ratio is taken within
 * each round, and the table gives the median ratio with the middle half of the rounds'
 * ratios, to show the noise.
 */
export async function benchHttp(options: HttpOptions): Promise<string[]> {
  const pinning = pinLoadGenerator();
  try {
    return await measureHttp(options, pinning.where);
  } finally {
    pinning.release();
  }
}

async function measureHttp(options: HttpOptions, where: string): Promise<string[]> {
  const generator = loadGenerator();
  const world = await makeBenchWorld(1);
  await world.writeState(1, 1);
  const issuer = await startIssuer();
  const servers: Running[] = [];
  // One at a time: on a busy machine, several compiling at once overrun the wait for each.
  const started = async (...starting: (() => Promise<Running>)[]) => {
    const running: Running[] = [];
    for (const start of starting) {
      const server = await start();
      servers.push(server);
      running.push(server);
    }
    return running;
  };
  try {
    // Another build's dist/berth.mjs (BENCH_BERTH_BEFORE), measured beside this one in the
    // same rounds on the goals' paths: what a change cost, in one run.
    const beforeBinary = process.env.BENCH_BERTH_BEFORE;
    // No identity provider answers (a port nobody listens on), and
    // every request, with a token, gets the 401 that says so. The baselines answer its bytes.
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const [berth, idle, accept, before, idleBefore] = await started(
      () => startBerthApi('berth api', world.state, issuer.url),
      () => startBerthApi('berth api (no identity provider)', world.state, nobody),
      () =>
        startScript('berth app (test authenticator)', 'berth-accept.ts', {
          BENCH_STATE: world.state,
        }),
      ...(beforeBinary
        ? [
            () =>
              startBerthApi('berth api (before)', world.state, issuer.url, {
                binary: beforeBinary,
              }),
            () =>
              startBerthApi('berth api (before, no identity provider)', world.state, nobody, {
                binary: beforeBinary,
              }),
          ]
        : []),
    );
    if (!berth || !idle || !accept) throw new Error('a berth server did not start');
    const json = { 'Content-Type': 'application/json' };
    const someToken = bearer('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl');
    const answers: Answers = {
      notFound: await capture(berth.url, '/nope', {}, undefined),
      unauthorized: await capture(berth.url, '/assign', json, ASSIGN),
      needsBoth: await capture(
        accept.url,
        '/assign',
        { ...json, ...bearer(ACCEPT_TOKEN) },
        '{"node":"n0"}',
      ),
      needsNode: await capture(accept.url, '/converge', { ...json, ...bearer(ACCEPT_TOKEN) }, '{}'),
    };
    answers.notFound.body = answers.notFound.body.replace('POST /nope', '{method} {path}');
    // Captured from a berth api of its own, stopped at once: the one measured meets the
    // load's requests only, as the baselines do. (Asked first, a lone request while it
    // looked for its issuer, it read 10 % dearer than a twin for the rest of its life.)
    const asked = await startBerthApi('berth api (its answers captured)', world.state, nobody);
    const noProvider = await capture(asked.url, '/assign', { ...json, ...someToken }, ASSIGN);
    await asked.stop();
    const env = { BENCH_ANSWERS: JSON.stringify(answers) };
    const idleEnv = { BENCH_ANSWERS: JSON.stringify({ ...answers, unauthorized: noProvider }) };
    const [plain, fastify, hono, plainIdle, fastifyIdle, honoIdle] = (await started(
      () => startScript('node:http', 'plain.ts', env),
      () => startScript('Fastify', 'fastify.ts', env),
      () => startScript('Hono', 'hono.ts', env),
      () => startScript('node:http', 'plain.ts', idleEnv),
      () => startScript('Fastify', 'fastify.ts', idleEnv),
      () => startScript('Hono', 'hono.ts', idleEnv),
    )) as [Running, Running, Running, Running, Running, Running];

    const targets: Target[] = [];
    const add = (target: Omit<Target, 'method'>) => targets.push({ ...target, method: 'POST' });
    const withBefore = (
      list: [Server, Running][],
      build: Running | undefined,
    ): [Server, Running][] => (build ? [...list, ['berth before', build]] : list);
    const refusing = withBefore(
      [
        ['node:http', plain],
        ['Fastify', fastify],
        ['Hono', hono],
        ['berth', berth],
      ],
      before,
    );
    for (const [server, running] of refusing)
      add({
        path: '404 (no route)',
        server,
        running,
        route: '/nope',
        headers: {},
        status: 404,
        goal: true,
      });
    for (const [server, running] of refusing)
      add({
        path: '401 (no token)',
        server,
        running,
        route: '/assign',
        headers: json,
        body: ASSIGN,
        status: 401,
        goal: true,
      });
    const idling = withBefore(
      [
        ['node:http', plainIdle],
        ['Fastify', fastifyIdle],
        ['Hono', honoIdle],
        ['berth', idle],
      ],
      idleBefore,
    );
    for (const [server, running] of idling)
      add({
        path: '401 (no identity provider)',
        server,
        running,
        route: '/assign',
        headers: { ...json, ...someToken },
        body: ASSIGN,
        status: 401,
        goal: true,
      });
    for (const [server, running] of [
      ['node:http', plain],
      ['Fastify', fastify],
      ['Hono', hono],
      ['berth', accept],
    ] as const)
      add({
        path: '400 (test authenticator, no module)',
        server,
        running,
        route: '/assign',
        headers: { ...json, ...bearer(ACCEPT_TOKEN) },
        body: '{"node":"n0"}',
        status: 400,
        goal: false,
      });
    const notes: string[] = [];
    // The 200 path is measured only once a real token is seen to be taken.
    const token = issuer.token({ sub: 'bench', aud: 'berth' });
    const probe = await capture(berth.url, '/assign', { ...json, ...bearer(token) }, ASSIGN);
    if (probe.status === 200)
      add({
        path: '200 (assign, loopback issuer token; journal fsync)',
        server: 'berth',
        running: berth,
        route: '/assign',
        headers: { ...json, ...bearer(token) },
        body: ASSIGN,
        status: 200,
        goal: false,
      });
    else notes.push(`the 200 path answered ${probe.status} with a loopback issuer's token`);

    const [first = 10] = options.connections;
    for (const target of targets) await load(generator, target, 1, first); // warm-up
    const tables: string[] = [];
    for (const connections of options.connections) {
      const measured = targets.filter((target) => target.goal || connections === first);
      log(`http: ${connections} connections, ${measured.length} targets`);
      const samples = await pairedRounds(generator, measured, options, connections);
      tables.push(
        tableOf(measured, samples, [
          `HTTP, keep-alive, ${connections} connections, load from ${generator.name}; ${where}; every server writes berth api's access log line for each request to a file (its standard error); ${options.rounds} rounds of ${options.seconds}s for the goals' paths, ${options.sideRounds} for the others; CPU µs/req is the server process's own CPU time (user and system) per answer; ratios are of req/s (CPU ÷ Hono of CPU µs/req), taken within each round: the median, and (in brackets) the middle half of the rounds`,
          ...notes,
        ]),
      );
    }
    tables.push(
      await pipelinedTable(
        targets.filter((target) => target.goal),
        options.rounds,
      ),
    );
    return tables;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await issuer.close();
    await world.cleanup();
  }
}

/**
 * One path at a time, so that the servers a ratio compares are measured seconds apart.
 * The servers' order turns by one each round: every server takes every place in turn,
 * and none is measured twice running. (Reversing the order every other round measured
 * the first and last twice running, warm, and read the same binary 7 % faster there
 * than in a middle place.)
 */
async function pairedRounds(
  generator: LoadGenerator,
  targets: Target[],
  options: HttpOptions,
  connections: number,
): Promise<Map<Target, Sample[]>> {
  const samples = new Map<Target, Sample[]>(targets.map((target) => [target, []]));
  for (const path of new Set(targets.map((target) => target.path))) {
    const group = targets.filter((target) => target.path === path);
    const rounds = group[0]?.goal ? options.rounds : options.sideRounds;
    for (let round = 0; round < rounds; round++) {
      const turned = group.map((_, i) => group[(i + round) % group.length] as Target);
      for (const target of turned)
        samples.get(target)?.push(await load(generator, target, options.seconds, connections));
    }
  }
  return samples;
}

function tableOf(targets: Target[], samples: Map<Target, Sample[]>, [title, ...notes]: string[]) {
  const rows: string[][] = [];
  for (const target of targets) {
    const mine = samples.get(target) ?? [];
    const sameRound = (server: Server, of: 'rps' | 'cpuUs' = 'rps') => {
      const other = targets.find((t) => t.path === target.path && t.server === server);
      const theirs = other ? (samples.get(other) ?? []) : [];
      if (!theirs.length || target.server === server) return [];
      return mine.map((sample, i) => sample[of] / (theirs[i]?.[of] ?? Number.NaN));
    };
    const wrong = mine.reduce((sum, sample) => sum + sample.wrong, 0);
    if (wrong)
      notes.push(`${target.server} on ${target.path}: ${wrong} answers were not ${target.status}`);
    rows.push([
      target.path,
      target.server,
      fmt(median(mine.map((sample) => sample.rps))),
      fmt(median(mine.map((sample) => sample.p99)), 1),
      fmt(median(mine.map((sample) => sample.cpuUs)), 1),
      ratioSpread(sameRound('node:http')),
      ratioSpread(sameRound('Fastify')),
      ratioSpread(sameRound('Hono')),
      ratioSpread(sameRound('Hono', 'cpuUs')),
    ]);
  }
  return [
    title,
    '',
    table(
      [
        'path',
        'server',
        'req/s',
        'p99 ms',
        'CPU µs/req',
        '÷ node:http',
        '÷ Fastify',
        '÷ Hono',
        'CPU ÷ Hono',
      ],
      rows,
    ),
    ...notes.map((note) => `\nnote: ${note}`),
  ].join('\n');
}

/**
 * The goals' paths again, each server's CPU time a request with requests pipelined (see
 * pipelined.ts): what each costs, with how soon the scheduler wakes it taken out. Paired
 * rounds as above, the ratio taken within each.
 */
async function pipelinedTable(targets: Target[], rounds: number): Promise<string> {
  const cpu = new Map<Target, number[]>(targets.map((target) => [target, []]));
  for (const path of new Set(targets.map((target) => target.path))) {
    const group = targets.filter((target) => target.path === path);
    for (let round = 0; round < rounds; round++)
      for (const target of group.map((_, i) => group[(i + round) % group.length] as Target))
        cpu
          .get(target)
          ?.push(await pipelinedCpuUs(target.running.url, target.running.pid, raw(target)));
  }
  const rows = targets.map((target) => {
    const mine = cpu.get(target) ?? [];
    const hono = targets.find((t) => t.path === target.path && t.server === 'Hono');
    const theirs = hono && hono !== target ? (cpu.get(hono) ?? []) : [];
    return [
      target.path,
      target.server,
      fmt(median(mine), 2),
      theirs.length ? ratioSpread(mine.map((us, i) => us / (theirs[i] ?? Number.NaN))) : '—',
    ];
  });
  return [
    `HTTP, the goals' paths pipelined (50 requests at a time on one connection, 10,000 a round), server on core 0; CPU µs/req is the server process's own, from /proc/<pid>/schedstat; ${rounds} rounds, the ratio taken within each round: the median, and the middle half`,
    '',
    table(['path', 'server', 'CPU µs/req', 'CPU ÷ Hono'], rows),
  ].join('\n');
}

/** A target's request as it goes on the wire, for pipelining. */
function raw(target: Pick<Target, 'method' | 'route' | 'headers' | 'body'>): string {
  const body = target.body ?? '';
  const headers = Object.entries({ ...target.headers, 'Content-Length': String(body.length) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `${target.method} ${target.route} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n${body}`;
}

/** A loopback port nobody listens on, once this returns: where no identity provider answers. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function bearer(token: string) {
  return { Authorization: `Bearer ${token}` };
}

/**
 * A server's answer, asked in the load's own bytes on a connection of its own. A measured
 * server meets no other kind of request: one from Node's fetch (other headers, in another
 * order) left a server, berth or bare Hono, 3–6 % dearer on the load's requests for the
 * rest of its life, V8 having met two shapes where the baselines met one.
 */
async function capture(
  base: string,
  route: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Answer> {
  const { hostname, port } = new URL(base);
  const bytes = raw({ method: 'POST', route, headers, body });
  // The connection is kept open until the whole answer is in: Node's server closes one
  // its client half-closes, and an answer that waits on the issuer would be lost.
  const text = await new Promise<string>((done, fail) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.slice(0, end))?.[1];
      if (end === -1 || length === undefined || received.length < end + 4 + Number(length)) return;
      socket.destroy();
      done(received);
    });
    socket.on('error', fail);
    socket.on('close', () => fail(new Error(`${base}${route} closed before answering`)));
  });
  const split = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
  const header = (name: string) =>
    lines
      .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
      ?.slice(name.length + 1)
      .trim();
  const kept: Record<string, string> = {};
  const type = header('Content-Type');
  const challenge = header('WWW-Authenticate');
  if (type) kept['Content-Type'] = type;
  if (challenge) kept['WWW-Authenticate'] = challenge;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: kept,
    body: Buffer.from(text.slice(split + 4), 'latin1').toString('utf8'),
  };
}

async function load(
  generator: LoadGenerator,
  target: Target,
  seconds: number,
  connections: number,
): Promise<Sample> {
  const cpuBefore = cpuMs(target.running.pid);
  const result = await generator.run({
    url: `${target.running.url}${target.route}`,
    method: target.method,
    headers: target.headers,
    body: target.body,
    status: target.status,
    seconds,
    connections,
  });
  return {
    rps: result.rps,
    p99: result.p99,
    cpuUs: ((cpuMs(target.running.pid) - cpuBefore) * 1000) / result.requests,
    wrong: result.wrong,
  };
}
