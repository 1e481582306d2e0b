import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throw-away state directory, its catalog, and one box that every node's root points at. */
export interface BenchWorld {
  dir: string;
  state: string;
  /**
   * Writes node records directly, as the state directory keeps them: nodes n0… up to
   * `nodes`, each assigned `perNode` catalog modules (others are left as they are).
   */
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
      const modules = Array.from({ length: perNode }, (_, i) => moduleName(i)).sort();
      const text = `${JSON.stringify({ assigned: modules, managed: {} }, null, 1)}\n`;
      for (let start = 0; start < count; start += 512) {
        const writes: Promise<void>[] = [];
        for (let index = start; index < Math.min(count, start + 512); index++) {
          const here = join(state, 'nodes', nodeName(index));
          writes.push(
            mkdir(here, { recursive: true, mode: 0o700 }).then(() =>
              writeFile(join(here, 'record.json'), text, { mode: 0o600 }),
            ),
          );
        }
        await Promise.all(writes);
      }
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
