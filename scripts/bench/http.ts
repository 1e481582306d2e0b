import { createServer } from 'node:net';
import { cpuMs, pinLoadGenerator } from './cores.ts';
import { startIssuer } from './issuer.ts';
import { type LoadGenerator, loadGenerator } from './load.ts';
import { ACCEPT_TOKEN, type Answer, type Answers } from './servers/answers.ts';
import { type Running, startBerthApi, startScript } from './spawn-server.ts';
import { fmt, log, median, ratioSpread, table } from './stats.ts';
import { makeBenchWorld } from './world.ts';

export interface HttpOptions {
  rounds: number;
  seconds: number;
  connections: number;
}

interface Target {
  path: string;
  server: 'node:http' | 'Fastify' | 'berth' | 'berth before';
  running: Running;
  method: 'POST';
  route: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
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
 * autocannon in this one) against one server process at a time. Path by path, every server
 * is run once per round, in turn, the order reversed every other round, so that a slow
 * moment on the machine hits all of them; a ratio is taken within each round, and the table gives
 * the median ratio with the middle half of the rounds' ratios, to show the noise.
 */
export async function benchHttp(options: HttpOptions): Promise<string> {
  const pinning = pinLoadGenerator();
  try {
    return await measureHttp(options, pinning.where);
  } finally {
    pinning.release();
  }
}

async function measureHttp(options: HttpOptions, where: string): Promise<string> {
  const generator = loadGenerator();
  const world = await makeBenchWorld(1);
  await world.writeState(1, 1);
  const issuer = await startIssuer();
  const servers: Running[] = [];
  try {
    const berth = await startBerthApi('berth api', world.state, issuer.url);
    servers.push(berth);
    // Another build's dist/berth.mjs (BENCH_BERTH_BEFORE), measured beside this one in the
    // same rounds on the 404 and 401 paths: what a change cost, in one run.
    const beforeBinary = process.env.BENCH_BERTH_BEFORE;
    const before = beforeBinary
      ? await startBerthApi('berth api (before)', world.state, issuer.url, { binary: beforeBinary })
      : undefined;
    if (before) servers.push(before);
    const accept = await startScript('berth app (test authenticator)', 'berth-accept.ts', {
      BENCH_STATE: world.state,
    });
    servers.push(accept);
    const answers: Answers = {
      notFound: await capture(berth.url, '/nope', {}, undefined),
      unauthorized: await capture(berth.url, '/assign', {}, ASSIGN),
      needsBoth: await capture(accept.url, '/assign', bearer(ACCEPT_TOKEN), '{"node":"n0"}'),
      needsNode: await capture(accept.url, '/converge', bearer(ACCEPT_TOKEN), '{}'),
    };
    answers.notFound.body = answers.notFound.body.replace('POST /nope', '{method} {path}');
    const env = { BENCH_ANSWERS: JSON.stringify(answers) };
    const plain = await startScript('node:http', 'plain.ts', env);
    servers.push(plain);
    const fastify = await startScript('Fastify', 'fastify.ts', env);
    servers.push(fastify);
    // The seed's own case: no identity provider answers (a port nobody listens on), and
    // every request, with a token, gets the 401 that says so. The baselines answer its bytes.
    const idle = await startBerthApi(
      'berth api (no identity provider)',
      world.state,
      `http://127.0.0.1:${await freePort()}`,
    );
    servers.push(idle);
    const someToken = bearer('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl');
    const noProvider = await capture(idle.url, '/assign', someToken, ASSIGN);
    const idleEnv = { BENCH_ANSWERS: JSON.stringify({ ...answers, unauthorized: noProvider }) };
    const plainIdle = await startScript('node:http', 'plain.ts', idleEnv);
    servers.push(plainIdle);
    const fastifyIdle = await startScript('Fastify', 'fastify.ts', idleEnv);
    servers.push(fastifyIdle);

    const targets: Target[] = [];
    const add = (
      path: string,
      server: Target['server'],
      running: Running,
      route: string,
      headers: Record<string, string>,
      body: string | undefined,
      status: number,
    ) => targets.push({ path, server, running, method: 'POST', route, headers, body, status });
    const json = { 'Content-Type': 'application/json' };
    const refusing: [Target['server'], Running][] = [
      ['node:http', plain],
      ['Fastify', fastify],
      ['berth', berth],
    ];
    if (before) refusing.push(['berth before', before]);
    for (const [server, running] of refusing) {
      add('404 (no route)', server, running, '/nope', {}, undefined, 404);
      add('401 (no token)', server, running, '/assign', json, ASSIGN, 401);
    }
    for (const [server, running] of [
      ['node:http', plainIdle],
      ['Fastify', fastifyIdle],
      ['berth', idle],
    ] as const)
      add(
        '401 (no identity provider: the seed)',
        server,
        running,
        '/assign',
        { ...json, ...someToken },
        ASSIGN,
        401,
      );
    for (const [server, running] of [
      ['node:http', plain],
      ['Fastify', fastify],
      ['berth', accept],
    ] as const) {
      add(
        '400 (test authenticator, no module)',
        server,
        running,
        '/assign',
        { ...json, ...bearer(ACCEPT_TOKEN) },
        '{"node":"n0"}',
        400,
      );
    }
    const notes: string[] = [];
    // The 200 path is measured only once a real token is seen to be taken.
    const token = issuer.token({ sub: 'bench', aud: 'berth' });
    const probe = await fetch(`${berth.url}/assign`, {
      method: 'POST',
      headers: { ...json, ...bearer(token) },
      body: ASSIGN,
    });
    await probe.arrayBuffer();
    if (probe.status === 200)
      add(
        '200 (assign, loopback issuer token; journal fsync)',
        'berth',
        berth,
        '/assign',
        { ...json, ...bearer(token) },
        ASSIGN,
        200,
      );
    else notes.push(`the 200 path answered ${probe.status} with a loopback issuer's token`);

    log(`http: ${targets.length} targets × ${options.rounds} rounds × ${options.seconds}s`);
    for (const target of targets) await load(generator, target, 1, options.connections); // warm-up
    const samples = new Map<Target, Sample[]>(targets.map((target) => [target, []]));
    // One path at a time, so that the servers a ratio compares are measured seconds apart.
    // The servers' order turns by one each round: every server takes every place in turn,
    // and none is measured twice running. (Reversing the order every other round measured
    // the first and last twice running, warm, and read the same binary 7 % faster there
    // than in a middle place.)
    for (const path of new Set(targets.map((target) => target.path))) {
      const group = targets.filter((target) => target.path === path);
      for (let round = 0; round < options.rounds; round++) {
        const turned = group.map((_, i) => group[(i + round) % group.length] as Target);
        for (const target of turned) {
          samples
            .get(target)
            ?.push(await load(generator, target, options.seconds, options.connections));
        }
      }
    }

    const rows: string[][] = [];
    for (const target of targets) {
      const mine = samples.get(target) ?? [];
      const sameRound = (server: Target['server']) => {
        const other = targets.find((t) => t.path === target.path && t.server === server);
        const theirs = other ? (samples.get(other) ?? []) : [];
        if (!theirs.length || target.server === server) return [];
        return mine.map((sample, i) => sample.rps / (theirs[i]?.rps ?? Number.NaN));
      };
      const wrong = mine.reduce((sum, sample) => sum + sample.wrong, 0);
      if (wrong)
        notes.push(
          `${target.server} on ${target.path}: ${wrong} answers were not ${target.status}`,
        );
      rows.push([
        target.path,
        target.server,
        fmt(median(mine.map((sample) => sample.rps))),
        fmt(median(mine.map((sample) => sample.p99)), 1),
        fmt(median(mine.map((sample) => sample.cpuUs)), 1),
        ratioSpread(sameRound('node:http')),
        ratioSpread(sameRound('Fastify')),
      ]);
    }
    return [
      `HTTP, keep-alive, ${options.connections} connections, load from ${generator.name}; ${where}; berth api with its access log on (to a file); median of ${options.rounds} rounds of ${options.seconds}s; CPU µs/req is the server process's own CPU time (user and system) per answer; ratios are of req/s, taken within each round: the median, and (in brackets) the middle half of the rounds`,
      '',
      table(['path', 'server', 'req/s', 'p99 ms', 'CPU µs/req', '÷ node:http', '÷ Fastify'], rows),
      ...notes.map((note) => `\nnote: ${note}`),
    ].join('\n');
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await issuer.close();
    await world.cleanup();
  }
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

async function capture(
  base: string,
  route: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Answer> {
  const response = await fetch(`${base}${route}`, { method: 'POST', headers, body });
  const kept: Record<string, string> = {};
  const type = response.headers.get('content-type');
  const challenge = response.headers.get('www-authenticate');
  if (type) kept['Content-Type'] = type;
  if (challenge) kept['WWW-Authenticate'] = challenge;
  return { status: response.status, headers: kept, body: await response.text() };
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
