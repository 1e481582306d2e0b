/**
 * The journal's words are made when it is read: a new entry's from its typed result and
 * refusal, the same words the act was answered with; an earlier berth's entry in the
 * words it kept, as they were. Read back from a state directory, as `berth log` reads it.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RefusalOf } from '../../src/model/refusal.ts';
import { fileStores } from '../../src/stores/file-store.ts';
import type { Stores } from '../../src/stores/stores.ts';
import { entryShown, entryWords } from '../../src/words/journal.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { saidOf } from '../../src/words/said.ts';
import { stoppedConverge } from './journal-fixture.ts';

describe("the journal's words, made when read", () => {
  let dir: string;
  let stores: Stores;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-words-'));
    stores = fileStores({ dir, createIfMissing: false });
  });
  after(async () => {
    await stores.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("makes a new entry's words from its typed outcome, the same as said at the time", async () => {
    const { result, refusal, entry } = stoppedConverge('web1');
    // What the act was answered with, in words, at the time.
    const said = saidOf({ result });
    const error = refusalWords(refusal);
    const node = await stores.openNode('web1', 'converge');
    await node.journal(entry);
    await node.close();
    const [read] = await fileStores({ dir, createIfMissing: false }).readJournal({
      about: ['web1'],
    });
    assert.ok(read && 'entry' in read);
    assert.match(said, /address in use/);
    assert.deepEqual(entryWords(read.entry), { said, error });
    // `berth log --json`: the words in place of the typed values, as before.
    const shown = entryShown(read.entry);
    assert.equal('result' in shown || 'refusal' in shown, false);
    assert.deepEqual([shown.said, 'error' in shown ? shown.error : undefined], [said, error]);
  });

  it("keeps a stale digest's changes as values, node by node, and reads them back in words", async () => {
    const given = 'ab'.repeat(32);
    const refusal: RefusalOf<'digest-stale-nodes'> = {
      kind: 'digest-stale-nodes',
      code: 'digest_stale',
      given,
      target: '@web',
      nodes: [
        { node: 'web1' },
        {
          node: 'web2',
          changes: [
            { kind: 'value', module: 'app', name: 'port', is: 8080 },
            {
              kind: 'package-bits',
              package: 'nginx',
              version: '1.22.1-9',
              was: ['0123456789abcdef0123'],
              is: ['fedcba9876543210fedc'],
            },
          ],
        },
        { node: 'web3', changes: [] },
      ],
    };
    const error = refusalWords(refusal);
    assert.equal(
      error,
      'the preview changed since digest abababababab…: web1 was not in that preview; ' +
        'web2: value port of app is now 8080, was not given; ' +
        "web2's package lists now give nginx 1.22.1-9 other bits (SHA256 fedcba9876543210…, not 0123456789abcdef…); " +
        'web3: its preview changed; nothing was done on any node; preview again',
    );
    await stores.journalUnplaced({
      at: '2030-05-01T00:00:03.000Z',
      actor: 'alice',
      via: 'cli',
      act: 'converge',
      node: '@web',
      target: '@web',
      digest: given,
      outcome: 'refused',
      code: 'digest_stale',
      refusal,
    });
    const [read] = await fileStores({ dir, createIfMissing: false }).readJournal({
      about: ['@web'],
    });
    assert.ok(read && 'entry' in read);
    assert.deepEqual('refusal' in read.entry && read.entry.refusal, refusal);
    assert.equal(entryWords(read.entry).error, error);
  });

  it("shows an earlier berth's entry in its own words, exactly as they were", async () => {
    const earlier = {
      entry_version: 2,
      at: '2030-05-01T00:00:01.000Z',
      actor: 'alice',
      via: 'cli',
      act: 'converge',
      node: 'old1',
      outcome: 'failed',
      code: 'hook_failed',
      steps: [{ kind: 'write', module: 'app', path: '/etc/app.conf' }],
      blockers: [],
      said: 'old1: wrote /etc/app.conf, in the words of then',
      error: "app's start failed (exit 1)",
    };
    await mkdir(join(dir, 'nodes', 'old1'), { recursive: true, mode: 0o700 });
    await appendFile(join(dir, 'nodes', 'old1', 'journal.jsonl'), `${JSON.stringify(earlier)}\n`);
    const [read] = await stores.readJournal({ about: ['old1'] });
    assert.ok(read && 'entry' in read);
    assert.deepEqual(entryWords(read.entry), { said: earlier.said, error: earlier.error });
    assert.deepEqual(JSON.parse(JSON.stringify(entryShown(read.entry))), earlier);
  });
});
