import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateX25519Identity } from 'age-encryption';
import type { Plugin } from 'esbuild';
import { openAct } from '../../src/commands/act.ts';
import type { ActDeps } from '../../src/commands/act-shapes.ts';
import type { CommandShape } from '../../src/commands/command-shape.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { fileConfig } from '../../src/config/file-config.ts';
import { machinesOf } from '../../src/machines/machines-of.ts';
import { fileStores } from '../../src/stores/file-store.ts';
import { ageSeal, heldKeys, SEALED_HEAD, type Seal } from '../../src/vault/seal.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { saidOf } from '../../src/words/said.ts';
import { buildBerth } from '../build.mjs';
import { bypassed } from './bypassed-seal.ts';
import { cleanEnv, fmt, log, median, ratioSpread, table, timeNode } from './stats.ts';

const SECRETS = 100;
const converge = shapeOf('converge');

/**
 * A converge's wall time, its CPU time (all threads), and the part of that in user space:
 * sealing's work is there, while the file system's is mostly the kernel's.
 */
interface Cost {
  wall: number;
  cpu: number;
  user: number;
}

const MEASURES = { wall: 'wall', cpu: 'CPU', user: 'CPU in user space' } as const;

type Mode = 'age' | 'none';

/** A world of `mode` made in a directory: its converge, timed, each call a converge. */
type MakeWorld = (dir: string, mode: Mode) => Promise<() => Promise<Cost>>;

/**
 * The sealed vault's cost, two ways: a converge (preview and act) that mints and writes
 * 100 secrets (an install), and one that restores 100 from the vault (their files removed
 * from the node), sealed with age and with sealing bypassed, interleaved round by round;
 * each round's ratio is taken within it, for the machine's load drifts between rounds.
 * The node is a rooted one: its cost is the file system's.
 *
 * - In one warm process, through the command table: the vault's own cost with nothing
 *   around it, the strictest reading.
 * - As an operator runs it: the binary, a process for the preview and one for the act,
 *   against the same binary built with its seal bypassed.
 */
export async function benchVault(rounds: number, binaryRounds: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-vault-'));
  try {
    log(`vault: converge of ${SECRETS} secrets, sealed with age and not, ${rounds} rounds`);
    const warm = await interleaved(
      rounds,
      join(dir, 'warm'),
      inProcess(await generateX25519Identity()),
    );
    log(`vault: the same with the binary, ${binaryRounds} rounds`);
    const cold = await interleaved(binaryRounds, join(dir, 'binary'), await binaries(dir));
    return [
      `Sealed vault: one converge (preview and act) of a module with ${SECRETS} secrets on a rooted node, sealed with age and with sealing bypassed, in interleaved rounds; ms are medians, the ratio the median of each round's own (the middle half in brackets); CPU is all threads' (goal ≤ 1.2× in wall and CPU time); its part in user space has sealing's own work, the kernel's is the file system's`,
      '',
      `In one warm process (${roundsOf(rounds)}):`,
      '',
      costTable(warm),
      '',
      `As an operator runs it: the binary, a process for the preview and one for the act, against the same binary built with its seal bypassed (${roundsOf(binaryRounds)}):`,
      '',
      costTable(cold),
    ].join('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const roundsOf = (count: number) => `${count} round${count === 1 ? '' : 's'}`;

type Costs = Record<'install' | 'restore', Record<Mode, Cost[]>>;

/** Rounds of an install and a restore in a world of each mode, in turns. */
async function interleaved(rounds: number, dir: string, make: MakeWorld): Promise<Costs> {
  const costs: Costs = { install: { age: [], none: [] }, restore: { age: [], none: [] } };
  for (let round = 0; round < rounds; round++) {
    const order: Mode[] = round % 2 ? ['none', 'age'] : ['age', 'none'];
    for (const mode of order) {
      const world = join(dir, `${mode}-${round}`);
      const timedConverge = await make(world, mode);
      costs.install[mode].push(await timedConverge());
      for (let i = 0; i < SECRETS; i++) await rm(join(world, 'box', `etc/many/s${i}`));
      costs.restore[mode].push(await timedConverge());
      await rm(world, { recursive: true, force: true });
    }
  }
  return costs;
}

function costTable(costs: Costs): string {
  const rows = (['install', 'restore'] as const).flatMap((kind) =>
    (Object.keys(MEASURES) as (keyof Cost)[]).map((measure) => {
      const { age, none } = costs[kind];
      const ratios = age.map((cost, round) => cost[measure] / (none[round] as Cost)[measure]);
      return [
        kind === 'install'
          ? `install: mint, seal and write ${SECRETS} secrets`
          : `restore: open ${SECRETS} secrets and write them`,
        MEASURES[measure],
        fmt(median(none.map((cost) => cost[measure])), 1),
        fmt(median(age.map((cost) => cost[measure])), 1),
        ratioSpread(ratios),
      ];
    }),
  );
  return table(['converge', 'time', 'ms, sealing bypassed', 'ms, sealed with age', 'ratio'], rows);
}

/** A state directory whose node `box` (rooted in the world) is to run 100 secrets. */
async function writeWorld(dir: string): Promise<{ state: string }> {
  const state = join(dir, 'state');
  const root = join(dir, 'box');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(root, { recursive: true });
  await writeFile(join(state, 'berth.json'), JSON.stringify({ nodes: { box: { root } } }));
  const secrets = Object.fromEntries(
    Array.from({ length: SECRETS }, (_, i) => [`s${i}`, { path: `/etc/many/s${i}` }]),
  );
  await writeFile(
    join(state, 'modules', 'many.json'),
    JSON.stringify({ description: 'many secrets', data: ['/var/lib/many'], secrets }),
  );
  return { state };
}

/**
 * Worlds in this process. Each has a seal of its own, so each pays for importing its
 * identity and recipient, as a berth process does.
 */
function inProcess(identity: string): MakeWorld {
  return async (dir, mode) => {
    const { state } = await writeWorld(dir);
    const seal: Seal = mode === 'age' ? ageSeal(heldKeys(identity)) : bypassed;
    const deps: ActDeps = {
      loadConfig: fileConfig(state),
      stores: fileStores({ dir: state, createIfMissing: false }, { seal }),
      machines: machinesOf,
    };
    await run(shapeOf('assign'), { node: 'box', module: 'many', yes: false }, deps);
    return () => timeConverge(deps);
  };
}

async function run(command: CommandShape, request: Parameters<typeof openAct>[1], deps: ActDeps) {
  const opened = await openAct(command, request, deps, { actor: 'bench', via: 'cli', line: {} });
  if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
  const outcome = await opened.run();
  if (outcome.refusal) throw new Error(refusalWords(outcome.refusal));
  return saidOf(outcome);
}

async function timeConverge(deps: ActDeps): Promise<Cost> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const said = await run(converge, { node: 'box', module: '', yes: false }, deps);
  await run(converge, { node: 'box', module: '', yes: true, digest: digestOf(said) }, deps);
  const spent = process.cpuUsage(cpu);
  return {
    wall: performance.now() - started,
    cpu: (spent.user + spent.system) / 1000,
    user: spent.user / 1000,
  };
}

/** The digest on a preview's last line. */
const digestOf = (said: string) => said.trim().split('\n').at(-1)?.split(' ')[1] ?? '';

/** Resolves process-seal.ts to the bypassed seal: the binary as it was before sealing. */
const bypassSealing: Plugin = {
  name: 'bench-bypassed-seal',
  setup(on) {
    on.onResolve({ filter: /\/process-seal\.ts$/ }, () => ({
      path: join(import.meta.dirname, 'bypassed-seal.ts'),
    }));
  },
};

/** Worlds run by two binaries built from this tree into `dir`: sealing, and bypassed. */
async function binaries(dir: string): Promise<MakeWorld> {
  const binary = { age: join(dir, 'age/berth.mjs'), none: join(dir, 'bypassed/berth.mjs') };
  await buildBerth({ outdir: join(dir, 'age') });
  await buildBerth({ outdir: join(dir, 'bypassed'), plugins: [bypassSealing] });
  const identity = join(dir, 'identity.txt');
  await writeFile(identity, `${await generateX25519Identity()}\n`, { mode: 0o600 });
  return async (world, mode) => {
    const { state } = await writeWorld(world);
    // Its own home, so that neither binary reads or makes an identity of the user's.
    const env = cleanEnv({ HOME: world, XDG_CONFIG_HOME: join(world, 'config') });
    if (mode === 'age') env.BERTH_IDENTITY = identity;
    const berth = async (...args: string[]) => {
      const ran = await timeNode([binary[mode], '--state', state, ...args], { env, usage: true });
      if (ran.code !== 0) throw new Error(`berth ${args.join(' ')}: ${ran.stderr.slice(0, 400)}`);
      return ran;
    };
    await berth('assign', 'box', 'many');
    return async () => {
      const preview = await berth('converge', 'box');
      const act = await berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
      const sum = (measure: 'ms' | 'cpuMs' | 'userMs') =>
        (preview[measure] ?? Number.NaN) + (act[measure] ?? Number.NaN);
      // A bypass that missed (process-seal.ts renamed) would time sealing twice.
      const vault = await readFile(join(state, 'nodes', 'box', 'vault.json'), 'utf8');
      if (vault.includes(SEALED_HEAD) !== (mode === 'age'))
        throw new Error(
          `the ${mode === 'age' ? 'sealing' : 'bypassed'} binary's vault is not what it is to be`,
        );
      return { wall: sum('ms'), cpu: sum('cpuMs'), user: sum('userMs') };
    };
  };
}
