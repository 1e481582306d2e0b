import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileStores } from '../../src/stores/file-store.ts';
import { makeWorld } from '../helpers/world.ts';
import { storeContract } from './contract.ts';

storeContract('a state directory', async ({ lockWaitMs, seal }) => {
  const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
  const location = { dir, createIfMissing: false };
  return {
    stores: fileStores(location, { lockWaitMs, seal }),
    reopen: async () => fileStores(location, { lockWaitMs, seal }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('a journal cut by a crash', () => {
  const whole = JSON.stringify({ at: '2026-11-21T07:00:00.000Z', act: 'assign', node: 'box' });
  const entry = {
    at: '2026-11-21T08:00:00.000Z',
    actor: 'alice',
    via: 'cli' as const,
    act: 'unassign',
    node: 'box',
    module: 'gitea',
    outcome: 'done' as const,
    said: 'box no longer runs gitea',
  };
  for (const [what, before, kept] of [
    ['a short cut line', `${whole}\n{"at":"2026-11-21T07:30`, `${whole}\n`],
    [
      'a cut line longer than the mend reads at once',
      `${whole}\n{"said":"${'x'.repeat(200_000)}`,
      `${whole}\n`,
    ],
    ['nothing but a cut line', `{"at":"2026-11-21T07:30`, ''],
    ['whole lines only', `${whole}\n`, `${whole}\n`],
  ] as const) {
    it(`keeps every whole line and drops the cut one: ${what}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
      try {
        const journal = join(dir, 'nodes', 'box', 'journal.jsonl');
        await mkdir(join(dir, 'nodes', 'box'), { recursive: true });
        await writeFile(journal, before);
        const store = await fileStores({ dir, createIfMissing: false }).openNode('box', 'unassign');
        await store.journal(entry);
        await store.close();
        assert.equal(await readFile(journal, 'utf8'), `${kept}${JSON.stringify(entry)}\n`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('a wide state directory with no vault yet', () => {
  it("is searched for earlier vaults once: a command on one node reads no other node's directory after", async () => {
    const world = await makeWorld({ web: { description: 'a web server' } });
    try {
      const NODES = 10_000;
      const record = `${JSON.stringify({ assigned: ['web'], managed: {} })}\n`;
      for (let start = 0; start < NODES; start += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, NODES - start) }, async (_, i) => {
            const here = join(world.state, 'nodes', `n${start + i}`);
            await mkdir(here, { recursive: true, mode: 0o700 });
            await writeFile(join(here, 'record.json'), record, { mode: 0o600 });
          }),
        );
      }
      const first = await world.berth('status', 'box');
      assert.equal(first.code, 0, first.stderr);
      assert.ok(
        await stat(join(world.state, 'vaults-sealed')),
        'the search is marked done though it found no vault',
      );
      // A vault of another node that cannot be read stops a command that reads it.
      await mkdir(join(world.state, 'nodes', `n${NODES - 1}`, 'vault.json'), { mode: 0o700 });
      for (const args of [
        ['status', 'box'],
        ['assign', 'box', 'web'],
      ]) {
        const run = await world.berth(...args);
        assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
      }
    } finally {
      await world.cleanup();
    }
  });
});
