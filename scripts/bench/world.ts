import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throw-away state directory, its catalog, and one box that every node's root points at. */
export interface BenchWorld {
  dir: string;
  state: string;
  /** Writes state.json directly: `nodes` nodes, each assigned `perNode` catalog modules. */
  writeState(nodes: number, perNode: number): Promise<void>;
  cleanup(): Promise<void>;
}

export const MODULES = 10;
export const nodeName = (index: number) => `n${index}`;
export const moduleName = (index: number) => `m${index}`;

/** A world whose berth.json knows `nodes` nodes and whose catalog has MODULES modules plus `extra`. */
export async function makeBenchWorld(nodes: number): Promise<BenchWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-bench-'));
  const state = join(dir, 'state');
  const box = join(dir, 'box');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(box, { recursive: true });
  const inventory: Record<string, { root: string }> = {};
  for (let index = 0; index < nodes; index++) inventory[nodeName(index)] = { root: box };
  await writeFile(join(state, 'berth.json'), JSON.stringify({ nodes: inventory }));
  for (const name of [...Array.from({ length: MODULES }, (_, i) => moduleName(i)), 'extra']) {
    await writeFile(
      join(state, 'modules', `${name}.json`),
      JSON.stringify({
        description: `bench module ${name}`,
        data: [`/var/lib/${name}`],
        files: { [`/etc/${name}/${name}.conf`]: { mode: '0640', content: `name = ${name}\n` } },
      }),
    );
  }
  return {
    dir,
    state,
    async writeState(count, perNode) {
      const assignments: Record<string, string[]> = {};
      const modules = Array.from({ length: perNode }, (_, i) => moduleName(i)).sort();
      for (let index = 0; index < count; index++) assignments[nodeName(index)] = modules;
      const text = JSON.stringify({ version: 1, assignments, managed: {}, accounts: {} }, null, 1);
      await writeFile(join(state, 'state.json'), `${text}\n`);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
