import assert from 'node:assert/strict';
import { digestOf, type World } from '../helpers/world.ts';

/** Previews a take or converge, then acts on its digest: each must be done. */
export async function previewThenAct(world: World, ...args: string[]) {
  const preview = await world.berth(...args);
  assert.equal(preview.code, 0, preview.stderr);
  const done = await world.berth(...args, '--yes', '--digest', digestOf(preview.stdout));
  assert.equal(done.code, 0, `${done.stderr}\n${done.stdout}`);
  return { preview: preview.stdout, said: done.stdout };
}
