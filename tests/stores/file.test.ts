import assert from 'node:assert/strict';
import {
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
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
    // A state directory keeps each node's journal as lines, each line as it was written.
    async writtenBefore(node, line) {
      await mkdir(join(dir, 'nodes', node), { recursive: true, mode: 0o700 });
      await appendFile(join(dir, 'nodes', node, 'journal.jsonl'), `${line}\n`);
    },
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
    result: { command: 'unassign', node: 'box', module: 'gitea', managed: false } as const,
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
        const written = { entry_version: 3, ...entry };
        assert.equal(await readFile(journal, 'utf8'), `${kept}${JSON.stringify(written)}\n`);
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

describe('kept previews in a state directory', () => {
  const preview = (n: number) => ({
    digest: n.toString(16).padStart(64, '0'),
    kind: 'converge' as const,
    node: 'box',
    at: '2026-11-21T07:00:00.000Z',
    basis: { n, words: 'x'.repeat(10_000) },
  });
  /** Every file under `dir`, by path: what it is on the disk. */
  async function files(dir: string) {
    const found = new Map<string, string>();
    for (const name of await readdir(dir, { recursive: true })) {
      const info = await stat(join(dir, name));
      if (info.isFile()) found.set(name, `${info.ino} ${info.mtimeMs} ${info.size}`);
    }
    return found;
  }

  it('keeping one writes a file of its own and leaves each kept before as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
    try {
      const stores = fileStores({ dir, createIfMissing: false });
      const node = await stores.openNode('box', 'converge');
      for (let n = 1; n <= 10; n++) await node.keepPreview(preview(n));
      await node.close();
      const here = join(dir, 'nodes', 'box');
      const before = await files(here);
      const again = await stores.openNode('box', 'converge');
      await again.keepPreview(preview(11));
      await again.close();
      const after = await files(here);
      const added = [...after.keys()].filter((name) => !before.has(name));
      assert.equal(added.length, 1, `one file added: ${added.join(', ')}`);
      for (const [name, what] of before) {
        if (name !== 'lock') assert.equal(after.get(name), what, `${name} is as it was`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("hold no definition's text: previews of a module of 200 KB files keep less than one of them", async () => {
    const FILE = 200_000;
    const files8 = Object.fromEntries(
      Array.from({ length: 8 }, (_, i) => [`/etc/big/part${i}.conf`, { source: `big/part${i}` }]),
    );
    const world = await makeWorld({ big: { description: 'a big module', files: files8 } });
    try {
      await mkdir(join(world.state, 'modules', 'big'));
      for (let i = 0; i < 8; i++)
        await writeFile(join(world.state, 'modules', 'big', `part${i}`), `${i}`.repeat(FILE));
      assert.equal((await world.berth('assign', 'box', 'big')).code, 0);
      const PREVIEWS = 5;
      for (let round = 0; round < PREVIEWS; round++) {
        // What the box holds differs each round, so each preview is one of its own.
        await world.onBox('/etc/big/part0.conf', `round ${round}\n`);
        const preview = await world.berth('converge', 'box');
        assert.equal(preview.code, 0, preview.stderr);
      }
      let kept = 0;
      let count = 0;
      const here = join(world.state, 'nodes', 'box');
      for (const name of await readdir(here, { recursive: true })) {
        if (!/previews/.test(name)) continue;
        const info = await stat(join(here, name));
        if (!info.isFile()) continue;
        kept += info.size;
        count++;
      }
      assert.ok(count > 0, 'previews are kept');
      assert.ok(kept < FILE, `${PREVIEWS} previews keep ${kept} bytes`);
    } finally {
      await world.cleanup();
    }
  });
});

describe('kept surveys in a state directory', () => {
  const survey = (node: string) => ({
    node,
    at: '2026-11-21T07:00:00.000Z',
    actor: 'ann',
    via: 'cli' as const,
    report: { steps: [], blockers: [], outcome: 'previewed' as const },
    said: `${node} is as assigned: nothing to do`,
  });

  it('are 0600, and one this berth cannot read is left out: the node reads as not surveyed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
    try {
      const stores = fileStores({ dir, createIfMissing: false });
      for (const node of ['box1', 'box2', 'box3']) {
        const opened = await stores.openNode(node, 'converge');
        await opened.keepSurvey(survey(node));
        await opened.close();
      }
      const path = (node: string) => join(dir, 'nodes', node, 'survey.json');
      assert.equal((await stat(path('box1'))).mode & 0o777, 0o600);
      await writeFile(path('box2'), '{"node": "box2", "said": 4');
      await writeFile(path('box3'), JSON.stringify({ ...survey('box3'), via: 'fax' }));
      assert.deepEqual(await stores.readSurveys(), [survey('box1')]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
