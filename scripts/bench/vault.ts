import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ActDeps, openAct } from '../../src/commands/act.ts';
import { commands } from '../../src/commands/table.ts';
import { fileConfig } from '../../src/config/file-config.ts';
import { machinesOf } from '../../src/machines/machines-of.ts';
import { saidOf } from '../../src/said.ts';
import { fileStores } from '../../src/stores/file-store.ts';
import { newIdentity } from '../../src/vault/age-keys.ts';
import { nodeAgeSeal } from '../../src/vault/process-seal.ts';
import { heldKeys, type Seal } from '../../src/vault/seal.ts';
import { fmt, log, median, ratioSpread, table } from './stats.ts';

const SECRETS = 100;
const converge = commands.find((command) => command.name === 'converge');

/**
 * Sealing bypassed: each value kept as base64, as the vault was before it was sealed (the
 * same files written, as often): what a converge costs without sealing.
 */
const bypassed: Seal = {
  seal: async (values) => values.map((value) => Buffer.from(value).toString('base64')),
  open: async (kept) => new Uint8Array(Buffer.from(kept, 'base64')),
};

/**
 * A converge's wall time, its process's CPU time (all its threads), and the part of that
 * in user space: sealing's work is there, while the file system's is mostly the kernel's.
 */
interface Cost {
  wall: number;
  cpu: number;
  user: number;
}

const MEASURES = { wall: 'wall', cpu: 'CPU', user: 'CPU in user space' } as const;

/**
 * The sealed vault's cost: a converge that mints and writes 100 secrets (an install),
 * and one that restores 100 from the vault (their files removed from the node), each a
 * preview and its act, in one process, with age sealing and with sealing bypassed,
 * interleaved round by round; each round's ratio is taken within it, for the machine's
 * load drifts between rounds. Each world has a seal of its own, so each pays for
 * importing its identity and recipient, as a berth process does, on node:crypto's
 * primitives, as the binary seals. The node is a rooted one: its cost is the file system's.
 */
export async function benchVault(rounds: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-vault-'));
  const identity = newIdentity();
  const times = {
    install: { age: [] as Cost[], none: [] as Cost[] },
    restore: { age: [] as Cost[], none: [] as Cost[] },
  };
  try {
    log(`vault: converge of ${SECRETS} secrets, sealed with age and not, ${rounds} rounds`);
    for (let round = 0; round < rounds; round++) {
      const order: ['age' | 'none', Seal][] = [
        ['age', nodeAgeSeal(heldKeys(identity))],
        ['none', bypassed],
      ];
      if (round % 2) order.reverse();
      for (const [name, seal] of order) {
        const world = join(dir, `${name}-${round}`);
        const deps = await makeWorld(world, seal);
        times.install[name].push(await timeConverge(deps));
        for (let i = 0; i < SECRETS; i++) await rm(join(world, 'box', `etc/many/s${i}`));
        times.restore[name].push(await timeConverge(deps));
        await rm(world, { recursive: true, force: true });
      }
    }
    const rows = (['install', 'restore'] as const).flatMap((kind) =>
      (Object.keys(MEASURES) as (keyof Cost)[]).map((measure) => {
        const { age, none } = times[kind];
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
    return [
      `Sealed vault: one converge (preview and act) of a module with ${SECRETS} secrets on a rooted node, ${rounds} interleaved rounds; ms are medians, the ratio the median of each round's own (the middle half in brackets); CPU is the process's, all its threads (goal ≤ 1.2× in wall and CPU time); its part in user space has sealing's own work, the kernel's is the file system's`,
      '',
      table(['converge', 'time', 'ms, sealing bypassed', 'ms, sealed with age', 'ratio'], rows),
    ].join('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function makeWorld(dir: string, seal: Seal): Promise<ActDeps> {
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
  const deps: ActDeps = {
    loadConfig: fileConfig(state),
    stores: fileStores({ dir: state, createIfMissing: false }, { seal }),
    machines: machinesOf,
  };
  const assign = commands.find((command) => command.name === 'assign');
  if (!assign) throw new Error('no assign command');
  await run(assign, { node: 'box', module: 'many', yes: false }, deps);
  return deps;
}

async function run(
  command: (typeof commands)[number],
  request: Parameters<typeof openAct>[1],
  deps: ActDeps,
) {
  const opened = await openAct(command, request, deps, { actor: 'bench', via: 'cli', mint: [] });
  if (opened.kind !== 'ready') throw new Error(opened.refused);
  const outcome = await opened.run();
  if (outcome.error) throw new Error(outcome.error);
  return saidOf(outcome);
}

async function timeConverge(deps: ActDeps): Promise<Cost> {
  if (!converge) throw new Error('no converge command');
  const started = performance.now();
  const cpu = process.cpuUsage();
  const said = await run(converge, { node: 'box', module: '', yes: false }, deps);
  const digest = said.trim().split('\n').at(-1)?.split(' ')[1];
  await run(converge, { node: 'box', module: '', yes: true, digest }, deps);
  const spent = process.cpuUsage(cpu);
  return {
    wall: performance.now() - started,
    cpu: (spent.user + spent.system) / 1000,
    user: spent.user / 1000,
  };
}
