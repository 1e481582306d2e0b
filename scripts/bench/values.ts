// What values and facts cost a preview over ssh: the same module on 8 fleet hosts, its ten
// files written as text in one state directory, and read from values (by @all, a group and
// a node) and facts in another; each state's no-change preview of @all timed in turns.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exitMasters, type Fleet, fleetUnavailable, startFleet } from '../../tests/fleet/fleet.ts';
import { BERTH, cleanEnv, fmt, log, median, quartiles, ratio, table, timeNode } from './stats.ts';

const digestOf = (said: string) => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

const FILES = 10;

/** A site of ten files and a secret; `valued` reads six of their lines from values and facts. */
function site(kind: 'plain' | 'valued') {
  const line = (value: string, text: string) => (kind === 'valued' ? value : text);
  const content = [
    `server_name ${line('{{value site_name}}', 'www.example.org')};`,
    `workers ${line('{{value workers}}', '8')};`,
    `tls ${line('{{value tls}}', 'true')};`,
    `listen ${line('{{fact address}}', '10.0.0.2')};`,
    `host ${line('{{fact fqdn}}', 'alpha.fleet.test')};`,
    `release ${line('{{fact codename}}', 'bookworm')};`,
    'token {{secret token}};',
    ...Array.from({ length: 40 }, (_, i) => `setting_${i} = ${i}`),
    '',
  ].join('\n');
  return {
    description: `a site of ${FILES} files, ${kind === 'valued' ? 'read from values and facts' : 'as text'}`,
    ...(kind === 'valued'
      ? {
          values: {
            site_name: { type: 'string' },
            workers: { type: 'integer', default: 4 },
            tls: { type: 'boolean', default: false },
          },
        }
      : {}),
    secrets: { token: { path: `/etc/berth-test/${kind}/token` } },
    files: Object.fromEntries(
      Array.from({ length: FILES }, (_, i) => [`/etc/berth-test/${kind}/f${i}.conf`, { content }]),
    ),
  };
}

/** A state directory whose inventory is the fleet's hosts, each to run the site. */
async function stateFor(dir: string, fleet: Fleet, kind: 'plain' | 'valued') {
  const state = join(dir, kind);
  const runtime = join(dir, `${kind}-run`);
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(runtime);
  await copyFile(fleet.sshConfig, join(state, 'ssh_config'));
  const names = fleet.hosts.map((host) => host.name);
  const nodes = Object.fromEntries(
    fleet.hosts.map((host) => [
      host.name,
      { ssh: host.name, ...(host.sudo ? { sudo: true } : {}) },
    ]),
  );
  await writeFile(
    join(state, 'berth.json'),
    JSON.stringify({
      nodes,
      groups: { half: names.slice(0, names.length / 2) },
      run: { '@all': ['site'] },
      sshConfig: 'ssh_config',
      ...(kind === 'valued'
        ? {
            values: {
              '@all': { site_name: 'example.org' },
              '@half': { workers: 8 },
              [names[0] as string]: { site_name: 'www.example.org', tls: true },
            },
          }
        : {}),
    }),
  );
  await writeFile(join(state, 'modules', 'site.json'), JSON.stringify(site(kind)));
  const env = cleanEnv({ XDG_RUNTIME_DIR: runtime });
  delete env.SSH_AUTH_SOCK;
  const berth = async (...args: string[]) => {
    const run = await timeNode([BERTH, '--state', state, ...args], {
      env,
      usage: true,
      timeoutMs: 300_000,
    });
    if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
    return run;
  };
  return { berth, runtime };
}

/**
 * 8 hosts (one through sudo), both sites converged once; then `rounds` rounds, each
 * timing both no-change previews of @all, in turns (the order swapped each round), the
 * ratio taken within the round.
 */
export async function benchValues(rounds: number): Promise<string> {
  const unavailable = fleetUnavailable();
  if (unavailable) return `Values and facts over ssh: not measured: ${unavailable}`;
  log('values: starting 8 ssh hosts');
  const fleet = await startFleet({ hosts: 8, sshdOptions: ['MaxSessions 30'] });
  const dir = await mkdtemp('/tmp/bvl-');
  const states = {
    plain: await stateFor(dir, fleet, 'plain'),
    valued: await stateFor(dir, fleet, 'valued'),
  };
  try {
    for (const state of Object.values(states)) {
      const preview = await state.berth('converge', '@all');
      await state.berth('converge', '@all', '--yes', '--digest', digestOf(preview.stdout));
    }
    const host = fleet.hosts[0] as Fleet['hosts'][0];
    const sessions: Record<string, number> = {};
    const ms = { plain: [] as number[], valued: [] as number[] };
    const cpu = { plain: [] as number[], valued: [] as number[] };
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    for (let round = 0; round < rounds; round++) {
      log(`values: round ${round + 1} of ${rounds}`);
      const order =
        round % 2 === 0 ? (['plain', 'valued'] as const) : (['valued', 'plain'] as const);
      const took: Record<string, number> = {};
      const used: Record<string, number> = {};
      for (const kind of order) {
        const before = await host.sessionsOpened();
        const preview = await states[kind].berth('converge', '@all');
        if (!/nothing to do/.test(preview.stdout))
          throw new Error(
            `the ${kind} preview has something to do: ${preview.stdout.slice(0, 400)}`,
          );
        sessions[kind] = (await host.sessionsOpened()) - before;
        took[kind] = preview.ms;
        used[kind] = preview.cpuMs ?? Number.NaN;
        ms[kind].push(preview.ms);
        cpu[kind].push(used[kind] as number);
      }
      ratios.push((took.valued as number) / (took.plain as number));
      cpuRatios.push((used.valued as number) / (used.plain as number));
    }
    const spread = (values: number[]) => {
      const [low, high] = quartiles(values);
      return `${ratio(median(values))} (${ratio(low)}–${ratio(high)})`;
    };
    return [
      `Values and facts over ssh: berth converge @all (a no-change preview) over 8 namespace hosts (one through sudo), a site of ${FILES} files and a secret on each; its files as text, against the same files reading 3 values (given by @all, a group and a node) and 3 facts (goal ≤ 1.05×); median of ${rounds} rounds, the two in turns, each ratio taken within its round (the middle half of the rounds' ratios in brackets); berth's CPU is the command's own, all its threads`,
      '',
      table(
        [
          'site',
          'preview ms',
          'against text',
          "berth's CPU ms",
          'against text',
          'sshd sessions on a host',
        ],
        [
          [
            'as text',
            fmt(median(ms.plain)),
            '—',
            fmt(median(cpu.plain)),
            '—',
            String(sessions.plain),
          ],
          [
            'values and facts',
            fmt(median(ms.valued)),
            spread(ratios),
            fmt(median(cpu.valued)),
            spread(cpuRatios),
            String(sessions.valued),
          ],
        ],
      ),
    ].join('\n');
  } finally {
    for (const state of Object.values(states)) {
      await exitMasters(state.runtime);
      await rm(state.runtime, { recursive: true, force: true });
    }
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
