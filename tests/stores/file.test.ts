import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileStores } from '../../src/stores/file-store.ts';
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
