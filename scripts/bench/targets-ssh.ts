// A target over ssh: `berth converge @all` (preview, then act) over the test fleet's
// namespace hosts, each with ten files holding secrets, two data directories and a start
// hook, against one host alone; and berth's peak resident set for the whole fleet.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fleetUnavailable, startFleet } from '../../tests/fleet/fleet.ts';
import { BERTH, cleanEnv, fmt, log, ratio, table, timeNode } from './stats.ts';

const APP = {
  description: 'ten files with secrets, two data directories, a start hook',
  data: ['/var/lib/berth-test/app/data1', '/var/lib/berth-test/app/data2'],
  secrets: Object.fromEntries(
    Array.from({ length: 10 }, (_, i) => [`s${i + 1}`, { path: `/etc/berth-test/app/s${i + 1}` }]),
  ),
  start: 'touch /var/lib/berth-test/app.started',
};

const digestOf = (said: string) => /digest ([0-9a-f]{64})\s*$/.exec(said)?.[1] ?? '';

export async function benchTargetsOverSsh(hosts: number): Promise<string> {
  const unavailable = fleetUnavailable();
  if (unavailable) return `Targets over ssh: not measured: ${unavailable}`;
  log(`targets-ssh: starting ${hosts} ssh hosts`);
  const fleet = await startFleet({ hosts, sshdOptions: ['MaxSessions 30', 'MaxStartups 100'] });
  const dir = await mkdtemp('/tmp/bts-');
  const runtime = join(dir, 'run');
  try {
    await mkdir(runtime);
    const state = join(dir, 'state');
    await mkdir(join(state, 'modules'), { recursive: true });
    await copyFile(fleet.sshConfig, join(state, 'ssh_config'));
    const nodes = Object.fromEntries(
      fleet.hosts.map((host) => [
        host.name,
        { ssh: host.name, ...(host.sudo ? { sudo: true } : {}) },
      ]),
    );
    const first = fleet.hosts[0]?.name as string;
    const others = fleet.hosts.slice(1).map((host) => host.name);
    await writeFile(
      join(state, 'berth.json'),
      JSON.stringify({
        nodes,
        groups: { rest: others },
        run: { '@all': ['app'] },
        sshConfig: 'ssh_config',
      }),
    );
    await writeFile(join(state, 'modules', 'app.json'), JSON.stringify(APP));
    const env = cleanEnv({ XDG_RUNTIME_DIR: runtime });
    delete env.SSH_AUTH_SOCK;
    const berth = async (...args: string[]) => {
      const run = await timeNode([BERTH, '--state', state, ...args], {
        env,
        rss: true,
        timeoutMs: 300_000,
      });
      if (run.code !== 0) throw new Error(`berth ${args.join(' ')}: ${run.stderr.slice(0, 400)}`);
      return run;
    };
    const converge = async (target: string, extra: string[] = []) => {
      const preview = await berth('converge', target);
      const act = await berth(
        'converge',
        target,
        '--yes',
        '--digest',
        digestOf(preview.stdout),
        ...extra,
      );
      return { preview, act };
    };
    log('targets-ssh: one host alone');
    const one = await converge(first);
    const oneAgain = await converge(first);
    log(`targets-ssh: the other ${others.length} hosts as @rest`);
    const many = await converge('@rest', ['--parallel', String(others.length)]);
    const manyAgain = await converge('@rest', ['--parallel', String(others.length)]);
    const row = (
      what: string,
      run: { preview: { ms: number }; act: { ms: number } },
      base: number,
    ) => [
      what,
      fmt(run.preview.ms),
      fmt(run.act.ms),
      fmt(run.preview.ms + run.act.ms),
      ratio((run.preview.ms + run.act.ms) / base),
    ];
    const base = one.preview.ms + one.act.ms;
    const baseAgain = oneAgain.preview.ms + oneAgain.act.ms;
    const rss = Math.max(many.preview.rssMiB ?? 0, many.act.rssMiB ?? 0);
    return [
      `Targets over ssh: berth converge of ${others.length} namespace hosts in one process (--parallel ${others.length}) against one host alone; ten files with secrets, two data directories, a start hook each (goal ≤ 2×); peak RSS of the ${others.length}-host act ${fmt(rss)} MiB`,
      '',
      table(
        ['converge', 'preview, ms', 'act, ms', 'both, ms', 'against one host'],
        [
          row('one host, first run', one, base),
          row(`@rest (${others.length} hosts), first run`, many, base),
          row('one host, no change', oneAgain, baseAgain),
          row(`@rest (${others.length} hosts), no change`, manyAgain, baseAgain),
        ],
      ),
    ].join('\n');
  } finally {
    for (const socket of await readdir(join(runtime, 'berth-ssh')).catch(() => [] as string[]))
      await new Promise<void>((done) => {
        const child = spawn(
          'ssh',
          ['-o', `ControlPath=${join(runtime, 'berth-ssh', socket)}`, '-O', 'exit', 'x'],
          {
            stdio: 'ignore',
          },
        );
        child.on('error', () => done());
        child.on('close', () => done());
      });
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
