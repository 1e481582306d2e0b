// The loop from nothing to an accepted token: on a fresh fleet host (its own /usr, apt
// pointed at a local repository of Debian's .debs), `berth assign` of the glewlwyd example,
// its converge (preview, then the act on its digest), a client_credentials token from the
// Glewlwyd it brought up, and that token accepted by a `berth api` started before it (200
// on /converge). The floor, on a fresh host of its own: the same packages by a bare
// apt-get over ssh, the same files written by hand (keys and certificate made beforehand,
// not timed), the module's own setup and start scripts, and the same token fetched.
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildAptRepository } from '../../tests/fleet/apt-repository.ts';
import {
  exitMasters,
  type Fleet,
  type FleetHost,
  fleetUnavailable,
  startFleet,
} from '../../tests/fleet/fleet.ts';
import { type ApiProcess, httpAsk, startApi } from '../../tests/helpers/api-process.ts';
import { BERTH, cleanEnv, fmt, log, median, ratio, ratioSpread, table, timeNode } from './stats.ts';

const EXAMPLES = join(import.meta.dirname, '../../examples/modules');
const PACKAGES = ['glewlwyd', 'dbconfig-sqlite3', 'curl', 'jq', 'rnbyc', 'openssl'];
const PORT = 4593;
const D = '/etc/glewlwyd/berth';

export async function benchIdpLoop(rounds: number): Promise<string> {
  const reason = fleetUnavailable();
  if (reason) return `idp-loop: could not be measured: ${reason}`;
  const repository = await buildAptRepository(PACKAGES);
  if (typeof repository !== 'string') return `idp-loop: could not be measured: ${repository.skip}`;
  // The fleet's second host logs in through sudo: not used here.
  const fleet = await startFleet({
    hosts: 2 * rounds + 1,
    ownUsr: true,
    aptRepository: repository,
  });
  const dir = await mkdtemp('/tmp/bfi-');
  const masters: string[] = [];
  const took = { berth: [] as number[], floor: [] as number[] };
  try {
    const hosts = fleet.hosts.filter((host) => !host.sudo);
    for (let round = 0; round < rounds; round++) {
      const [mine, bare] = hosts.slice(2 * round, 2 * round + 2) as [FleetHost, FleetHost];
      log(`idp-loop: round ${round + 1} of ${rounds}`);
      const sides = [
        async () =>
          took.berth.push(await berthLoop(join(dir, `berth-${round}`), fleet, mine, masters)),
        async () => took.floor.push(await floorLoop(join(dir, `floor-${round}`), fleet, bare)),
      ];
      for (let turn = 0; turn < sides.length; turn++)
        await sides[(turn + round) % sides.length]?.();
    }
  } finally {
    await Promise.all(
      fleet.hosts.map((host) => host.exec(`sh ${D}/ctl.sh stop 2>/dev/null; true`)),
    );
    await Promise.all(masters.map(exitMasters));
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(repository, { recursive: true, force: true });
  }
  return [
    `idp-loop: Glewlwyd on a fresh fleet host, from a local repository: berth assign, converge (preview and act), a client_credentials token, accepted by a berth api started before (200 on /converge), against the floor: a bare apt-get install of the same packages over ssh, the same files written, the module's own setup and start, and the same token; median of ${rounds} rounds, each ratio taken within its round (goal ≤ 1.3×)`,
    '',
    table(
      ['how', 'ms', 'against the floor'],
      [
        ['floor: apt-get, files, setup and start, token', fmt(median(took.floor)), ratio(1)],
        [
          'berth: assign to the first accepted token',
          fmt(median(took.berth)),
          ratioSpread(took.berth.map((ms, round) => ms / (took.floor[round] as number))),
        ],
      ],
    ),
  ].join('\n');
}

/** The name berth.json reaches the host by: its `host` fact, its certificate's name. */
const nameOf = (host: FleetHost) => host.name;

function curl(args: string[], input: string): string {
  return execFileSync('curl', ['-fsS', ...args], { input, encoding: 'utf8', timeout: 30_000 });
}

/** A client_credentials token from the host's Glewlwyd, trusting `ca` alone. */
function token(host: FleetHost, ca: string, secret: string): string {
  const answer = curl(
    [
      ...['--cacert', ca, '--capath', '/nonexistent', '-K', '-'],
      ...['--resolve', `${nameOf(host)}:${PORT}:${host.address}`],
      ...['-d', 'grant_type=client_credentials', '-d', 'scope=berth'],
      `https://${nameOf(host)}:${PORT}/api/oidc/token`,
    ],
    `user = "berth-deployer:${secret}"\n`,
  );
  return JSON.parse(answer).access_token;
}

/** berth from assign to its api's first 200 with the token; the api is started beforehand. */
async function berthLoop(
  dir: string,
  fleet: Fleet,
  host: FleetHost,
  masters: string[],
): Promise<number> {
  const state = join(dir, 'state');
  const runtime = join(dir, 'run');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(runtime);
  masters.push(runtime);
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({ nodes: { [host.name]: { ssh: host.name } }, sshConfig: fleet.sshConfig }),
  );
  cpSync(join(EXAMPLES, 'glewlwyd.json'), join(state, 'modules', 'glewlwyd.json'));
  cpSync(join(EXAMPLES, 'glewlwyd'), join(state, 'modules', 'glewlwyd'), { recursive: true });
  const env = cleanEnv({ XDG_RUNTIME_DIR: runtime }) as Record<string, string | undefined>;
  env.SSH_AUTH_SOCK = undefined;
  const berth = async (...args: string[]) => {
    const timed = await timeNode([BERTH, '--state', state, ...args], {
      env: env as NodeJS.ProcessEnv,
      timeoutMs: 600_000,
    });
    if (timed.code !== 0)
      throw new Error(`berth ${args.join(' ')} failed (${timed.code}): ${timed.stderr.trim()}`);
    return timed;
  };
  // berth api resolves the host's name as an operator's DNS would: its own /etc/hosts.
  const hosts = join(dir, 'hosts');
  await writeFile(
    hosts,
    `${readFileSync('/etc/hosts', 'utf8')}\n${host.address}\t${nameOf(host)}\n`,
  );
  let api: ApiProcess | undefined;
  try {
    api = await startApi(
      [
        '--state',
        state,
        '--listen',
        '127.0.0.1:0',
        '--issuer',
        `https://${nameOf(host)}:${PORT}/api/oidc`,
      ],
      env,
      [
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$0" /etc/hosts && exec "$@"',
        hosts,
      ],
    );
    const started = performance.now();
    await berth('assign', host.name, 'glewlwyd');
    const preview = await berth('converge', host.name);
    const digest = /digest ([0-9a-f]{64})\s*$/.exec(preview.stdout)?.[1] ?? '';
    await berth('converge', host.name, '--yes', '--digest', digest);
    const secret = (await berth('secret', host.name, 'glewlwyd', 'deployer_secret')).stdout.trim();
    const ca = join(dir, 'ca.pem');
    await writeFile(ca, (await berth('ca')).stdout);
    const accepted = await httpAsk(api.url, {
      path: '/converge',
      body: JSON.stringify({ node: host.name }),
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${token(host, ca, secret)}`,
      },
    });
    const ms = performance.now() - started;
    if (accepted.status !== 200)
      throw new Error(`berth api did not accept the token (${accepted.status}): ${accepted.text}`);
    return ms;
  } finally {
    await api?.stop();
  }
}

/** The floor: bare apt-get, the files as berth writes them, setup, start, a token. */
async function floorLoop(dir: string, fleet: Fleet, host: FleetHost): Promise<number> {
  await mkdir(dir, { recursive: true });
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'tls.key');
  openssl(
    ...['req', '-x509', '-new', '-key', 'tls.key', '-sha256', '-days', '30'],
    ...['-subj', `/CN=${nameOf(host)}`, '-addext', `subjectAltName=DNS:${nameOf(host)}`],
    ...['-out', 'tls.pem'],
  );
  openssl(
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    'signing.key',
  );
  const secret = 'floor-deployer-secret-0123456789';
  const render = async (name: string) =>
    (await readFile(join(EXAMPLES, 'glewlwyd', name), 'utf8'))
      .replaceAll('{{fact host}}', nameOf(host))
      .replaceAll('{{value port}}', String(PORT));
  const files: [string, string, string][] = [
    ['glewlwyd.conf', await render('glewlwyd.conf'), '644'],
    ['ctl.sh', await render('ctl.sh'), '700'],
    ['setup.sh', await render('setup.sh'), '700'],
    ['tls.key', await readFile(join(dir, 'tls.key'), 'utf8'), '400'],
    ['tls.pem', await readFile(join(dir, 'tls.pem'), 'utf8'), '644'],
    ['signing.key', await readFile(join(dir, 'signing.key'), 'utf8'), '600'],
    ['admin.password', 'floor-admin-password-0123\n', '600'],
    ['deployer.secret', `${secret}\n`, '600'],
  ];
  const script = [
    'set -e',
    `DEBIAN_FRONTEND=noninteractive apt-get install -y -q ${PACKAGES.join(' ')} >/dev/null`,
    `mkdir -p ${D}`,
    ...files.map(
      ([name, text, mode]) =>
        `cat > ${D}/${name} <<'BERTH_BENCH_EOF'\n${text.endsWith('\n') ? text : `${text}\n`}BERTH_BENCH_EOF\nchmod ${mode} ${D}/${name}`,
    ),
    `chown glewlwyd ${D}/tls.key`,
    `sh ${D}/setup.sh >/dev/null`,
    `sh ${D}/ctl.sh start`,
  ].join('\n');
  const started = performance.now();
  const done = await fleet.ssh(host.name, 'sh -s', { input: script });
  if (done.code !== 0) throw new Error(`the floor's install on ${host.name}: ${done.stderr}`);
  token(host, join(dir, 'tls.pem'), secret);
  return performance.now() - started;
}
