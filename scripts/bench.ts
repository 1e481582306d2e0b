// `npm run bench`: how fast berth is on this machine, as ratios measured in the same run.
// Not a test: it never fails on a slow machine, it only reports. Traffic stays on 127.0.0.1.
//
//   npm run bench                 # everything, about 4 minutes
//   npm run bench -- --quick      # a short pass to try the harness
//   npm run bench -- http cli     # only some sections: http, cli, scale, store, teams,
//                                 # fleet (ssh), nodes (twenty at once), bigstate, acts,
//                                 # diff (a take preview of a 5,000-line file),
//                                 # vault (a converge of 100 secrets, sealed and not),
//                                 # targets (a group in one process), targets-ssh (50 hosts,
//                                 # and Ansible beside), previews (12 rounds of a group
//                                 # preview and act, 200 KB files), hooks (a chatty
//                                 # hook's output cleared of 50 secrets), packages (nginx
//                                 # and redis-server on a fresh ssh host, and bare apt-get),
//                                 # packages-fleet (the same on 8 hosts at once, and Ansible)
//                                 # view (a survey of 50 nodes, the button, against converge --json)
//                                 # values (a preview of 8 ssh hosts reading values and
//                                 # facts against the same written as text)
//                                 # idp-loop (assign of the glewlwyd example to its first
//                                 # token berth api accepts, against apt-get and its start)
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { benchColdStart } from './bench/cli.ts';
import { benchHttp } from './bench/http.ts';
import { benchScale } from './bench/scale.ts';
import { BERTH, log } from './bench/stats.ts';
import { benchStore } from './bench/store.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const chosen = args.filter((arg) => !arg.startsWith('--'));
const wants = (section: string) => chosen.length === 0 || chosen.includes(section);

if (!existsSync(BERTH)) {
  process.stderr.write('bench: no dist/berth.mjs; run npm ci (or npm run build) first\n');
  process.exit(2);
}

const sections: string[] = [];
const started = performance.now();
const run = async (name: string, section: () => Promise<string>) => {
  if (!wants(name)) return;
  try {
    sections.push(await section());
  } catch (error) {
    sections.push(`${name}: could not be measured: ${(error as Error).message}`);
  }
};

// At 10 connections and at 32: the goals hold at both. About 4 minutes: eleven
// rounds of each goal path, for a round of one second on this shared machine can be 15 %
// off its neighbours.
await run('http', async () =>
  (
    await benchHttp({
      rounds: quick ? 1 : 11,
      sideRounds: quick ? 1 : 3,
      seconds: 1,
      connections: [10, 32],
    })
  ).join('\n\n'),
);
await run('cli', () => benchColdStart(quick ? 5 : 21));
await run('scale', () =>
  benchScale(quick ? [1_000, 10_000] : [1_000, 10_000, 100_000], quick ? 1 : 5),
);
await run('store', () => (quick ? benchStore(1, 1) : benchStore(3, 3)));
await run('teams', async () =>
  (await import('./bench/teams.ts')).benchTeams(quick ? 1 : 3, quick ? 1 : 3),
);
await run('fleet', async () => (await import('./bench/fleet.ts')).benchFleet(quick ? 1 : 5));
await run('nodes', async () => (await import('./bench/seams.ts')).fleet(quick));
await run('bigstate', async () => (await import('./bench/seams.ts')).bigState(quick));
await run('acts', async () => (await import('./bench/seams.ts')).apiActs(quick));
await run('diff', async () => (await import('./bench/diff.ts')).benchDiff(quick ? 3 : 11));
await run('hooks', async () =>
  (await import('./bench/hook-output.ts')).benchHookOutput(quick ? 3 : 11),
);
// 41 rounds in one process, about 40 s: a converge's CPU is mostly the kernel's (fsync,
// rename), which drifts by a third from round to round here, against the vault's tenth.
// Then 15 with the binary, about 45 s.
await run('vault', async () =>
  (await import('./bench/vault.ts')).benchVault(quick ? 2 : 41, quick ? 1 : 15),
);
await run('targets', async () => (await import('./bench/targets.ts')).benchTargets(quick));
await run('previews', async () =>
  (await import('./bench/previews.ts')).benchPreviews(5, 12, quick ? 1 : 3),
);
await run('targets-ssh', async () =>
  (await import('./bench/targets-ssh.ts')).benchTargetsOverSsh(quick ? 10 : 50, quick ? 1 : 3),
);
await run('packages', async () =>
  (await import('./bench/packages.ts')).benchPackages(quick ? 1 : 3),
);
await run('packages-fleet', async () =>
  (await import('./bench/packages.ts')).benchPackagesFleet(quick ? 2 : 8, quick ? 1 : 5),
);
await run('view', async () => (await import('./bench/view.ts')).benchView(quick ? 3 : 11));
await run('values', async () => (await import('./bench/values.ts')).benchValues(quick ? 2 : 25));
await run('idp-loop', async () =>
  (await import('./bench/idp-loop.ts')).benchIdpLoop(quick ? 1 : 3),
);

const cpu = cpus()[0]?.model ?? 'unknown CPU';
log(`done in ${Math.round((performance.now() - started) / 1000)} s`);
process.stdout.write(
  `berth bench — Node ${process.version}, ${cpus().length} × ${cpu}\n\n${sections.join('\n\n')}\n`,
);
