/**
 * The Stores contract: what every backend (memory, a state directory, PostgreSQL) must
 * do, written as its specification. Each backend's test file calls `storeContract`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Blocker } from '../../src/model/blocker.ts';
import type { NodeRecord } from '../../src/model/state.ts';
import {
  type JournalQuery,
  KEPT_PREVIEWS,
  type KeptPreview,
  type KeptSurvey,
  type NewJournalEntry,
  StoreError,
  type Stores,
} from '../../src/stores/stores.ts';
import { ageSeal, heldKeys, type Seal, VaultError } from '../../src/vault/seal.ts';
import { stoppedConverge } from './journal-fixture.ts';

export interface StoreUnderTest {
  stores: Stores;
  /** The same records opened again, as another process (or controller) would. */
  reopen(): Promise<Stores>;
  cleanup(): Promise<void>;
  /**
   * Puts a journal line into a node's journal as an earlier berth kept it, its store
   * brought up to this berth's since; none for a store no earlier berth kept (memory).
   */
  writtenBefore?(node: string, line: string): Promise<void>;
}

/** `seal` is what every store the maker makes (and reopens) seals its vault with. */
export type MakeStores = (options: { lockWaitMs: number; seal: Seal }) => Promise<StoreUnderTest>;

/** Three age identities made by the reference `age-keygen`, with their recipients. */
const ALICE = {
  identity: 'AGE-SECRET-KEY-1Z350CM7GTQ457PQQAHHPM7A5SFDGUY29HCM77JSS4KRXTRWF560QMKKFLX',
  recipient: 'age16ujejuxn00zupsvuv35qmge7svpxkj7nwr73e3kr248ts26j5des0j4yga',
};
const BOB = {
  identity: 'AGE-SECRET-KEY-1YGDNYWXJ470W6E6TZDEYMQ4UJ9QA5HHQM2KQ6CF6AKRN0F8AKMJSQTK6QJ',
  recipient: 'age17m8g48jsewl94h0ktttyslpp709qkpqs2ulhvmzkyejd07t96sws08dhzy',
};
const CAROL = {
  identity: 'AGE-SECRET-KEY-1VMWTR0RQ8KP6C8FUM88N53HY6CQDQAUS6DEKRM66TXUNVADCECYS0DYPQL',
  recipient: 'age10psk0nv3aaan8va74dh5mpdnxhga0f4gflzp9cjzx6dprx6usvsqhh6pfc',
};

const RECORD: NodeRecord = {
  assigned: ['gitea', 'postgres'],
  managed: {
    postgres: { since: '2026-11-21T07:00:00.000Z', via: 'take', started: true },
    // A reload that failed is owed: the record keeps it until one succeeds.
    gitea: {
      since: '2026-11-21T07:00:00.000Z',
      via: 'converge',
      started: true,
      pending: ['reload'],
    },
  },
  account: {
    takenAt: '2026-11-21T06:59:00.000Z',
    modules: {
      postgres: { data: [{ path: '/var/lib/postgresql', found: true }], secrets: {}, files: {} },
    },
    problems: {},
  },
};

function entry(node: string, at: string, act = 'assign', module?: string): NewJournalEntry {
  return {
    at,
    actor: 'alice',
    via: 'cli',
    act,
    node,
    module,
    outcome: 'done',
    result: { command: 'rekey', node, resealed: 1 },
  };
}

function preview(node: string, n: number): KeptPreview {
  return {
    digest: n.toString(16).padStart(64, '0'),
    kind: 'converge',
    node,
    at: '2026-11-21T07:00:00.000Z',
    basis: { n },
  };
}

/** A survey as an earlier berth kept it: its words, said when it was made. */
function survey(node: string, at: string, said: string): KeptSurvey {
  return {
    node,
    at,
    actor: 'alice',
    via: 'cli',
    report: {
      digest: 'e'.repeat(64),
      steps: [{ kind: 'write', module: 'gitea', path: '/etc/gitea/app.ini' }],
      blockers: [
        {
          code: 'held_not_managed',
          kind: 'held-not-managed',
          module: 'redis',
          path: '/var/lib/redis',
          words: "web1 holds redis's data",
        },
      ],
      outcome: 'previewed',
      ms: 12,
    },
    said,
  };
}

export function storeContract(name: string, make: MakeStores, skip?: string) {
  describe(`the stores contract: ${name}`, () => {
    let subject: StoreUnderTest;
    let stores: Stores;
    // The stores seal with whatever `sealing` is now: a test changes who berth is.
    let sealing = ageSeal(heldKeys(ALICE.identity));
    const seal: Seal = {
      seal: (values, fresh) => sealing.seal(values, fresh),
      open: (sealed, what) => sealing.open(sealed, what),
    };
    before(async () => {
      if (skip) return;
      subject = await make({ lockWaitMs: 400, seal });
      stores = subject.stores;
    });
    after(async () => {
      if (skip) return;
      await stores?.close();
      await subject?.cleanup();
    });

    it('a node never written has an empty record, and no node is listed', { skip }, async () => {
      assert.deepEqual(await stores.readNode('never'), { assigned: [], managed: {} });
      const opened = await stores.openNode('never', 'status');
      assert.deepEqual(await opened.record(), { assigned: [], managed: {} });
      await opened.close();
      assert.ok(!(await stores.listNodes()).includes('never-written-at-all'));
    });

    it("keeps a node's record: read back in the act, after it, and by another opening", {
      skip,
    }, async () => {
      const opened = await stores.openNode('rec', 'assign');
      await opened.saveRecord(RECORD);
      assert.deepEqual(await opened.record(), RECORD);
      await opened.close();
      assert.deepEqual(await stores.readNode('rec'), RECORD);
      const again = await subject.reopen();
      try {
        assert.deepEqual(await again.readNode('rec'), RECORD);
        assert.ok((await again.listNodes()).includes('rec'));
      } finally {
        await again.close();
      }
    });

    it("keeps a record's names as given, JavaScript's own property names too", {
      skip,
    }, async () => {
      // valibot's record drops these keys as it reads; a module named constructor that
      // berth manages would be lost from the record at the next read.
      const since = '2026-11-21T07:00:00.000Z';
      const held = { found: true, fingerprint: 'f' };
      const named: NodeRecord = {
        assigned: ['constructor', 'prototype'],
        managed: {
          constructor: { since, via: 'converge' as const, started: true },
          prototype: { since, via: 'take', started: false },
        },
        account: {
          takenAt: since,
          modules: {
            constructor: {
              data: [],
              secrets: { constructor: { path: '/etc/c/constructor', ...held } },
              files: { '/etc/c/conf': held },
            },
          },
          problems: { prototype: 'it is not valid' },
        },
      };
      const opened = await stores.openNode('constructor', 'assign');
      await opened.saveRecord(named);
      await opened.close();
      const again = await subject.reopen();
      try {
        const read = await again.readNode('constructor');
        assert.deepEqual(JSON.parse(JSON.stringify(read)), named);
        assert.ok(Object.hasOwn(read.managed, 'constructor'));
        assert.ok((await again.listNodes()).includes('constructor'));
      } finally {
        await again.close();
      }
    });

    it("writes one node's record without touching another's", { skip }, async () => {
      const a = await stores.openNode('iso-a', 'assign');
      await a.saveRecord({ assigned: ['redis'], managed: {} });
      await a.close();
      const b = await stores.openNode('iso-b', 'assign');
      await b.saveRecord({ assigned: ['nginx'], managed: {} });
      await b.close();
      assert.deepEqual((await stores.readNode('iso-a')).assigned, ['redis']);
      assert.deepEqual((await stores.readNode('iso-b')).assigned, ['nginx']);
    });

    it("keeps a node's secrets with their origin, apart from every other node's", {
      skip,
    }, async () => {
      const opened = await stores.openNode('vlt', 'take');
      assert.equal(await opened.vault.get('postgres', 'password'), undefined);
      const value = new TextEncoder().encode('s3cret-value\n');
      await opened.vault.put({
        module: 'postgres',
        secret: 'password',
        entry: { value, origin: 'found on vlt', at: 'then' },
      });
      const key = await opened.vault.fingerprintKey();
      assert.ok(key.length >= 16, 'a fingerprint key of at least 128 bits');
      await opened.close();

      const again = await subject.reopen();
      try {
        const node = await again.openNode('vlt', 'take');
        const kept = await node.vault.get('postgres', 'password');
        assert.deepEqual(kept && [...kept.value], [...value]);
        assert.equal(kept?.origin, 'found on vlt');
        assert.equal(kept?.at, 'then');
        assert.deepEqual([...(await node.vault.fingerprintKey())], [...key], 'the key is kept');
        const all = await node.vault.all();
        assert.deepEqual(
          all.map((item) => [item.module, item.secret, new TextDecoder().decode(item.value)]),
          [['postgres', 'password', 's3cret-value\n']],
        );
        await node.close();
        const other = await again.openNode('vlt-other', 'take');
        assert.equal(await other.vault.get('postgres', 'password'), undefined);
        assert.deepEqual(await other.vault.all(), []);
        await other.close();
      } finally {
        await again.close();
      }
    });

    it('replaces a secret put twice, and keeps the bytes exactly', { skip }, async () => {
      const opened = await stores.openNode('vlt2', 'converge');
      const bytes = new Uint8Array([0, 255, 10, 13, 128]);
      const kept = (value: Uint8Array, origin: string) => ({
        module: 'm',
        secret: 's',
        entry: { value, origin, at: origin },
      });
      await opened.vault.put(kept(new Uint8Array([1]), 'a'));
      await opened.vault.put(kept(bytes, 'b'));
      const found = await opened.vault.get('m', 's');
      assert.deepEqual([...(found?.value ?? [])], [...bytes]);
      assert.equal(found?.origin, 'b');
      await opened.close();
    });

    it('keeps many secrets put at once, the last of one name winning', { skip }, async () => {
      const opened = await stores.openNode('vlt3', 'converge');
      const many = Array.from({ length: 12 }, (_, i) => ({
        module: i < 6 ? 'a' : 'b',
        secret: `s${i % 6}`,
        entry: { value: new Uint8Array([i, 0, 255]), origin: `o${i}`, at: `t${i}` },
      }));
      const twice = { ...many[0], entry: { value: new Uint8Array([9]), origin: 'again', at: 'x' } };
      await opened.vault.put(...many, twice as (typeof many)[number]);
      await opened.vault.put();
      await opened.close();
      const again = await subject.reopen();
      try {
        const node = await again.openNode('vlt3', 'converge');
        const all = await node.vault.all();
        assert.equal(all.length, 12);
        assert.deepEqual([...((await node.vault.get('a', 's0'))?.value ?? [])], [9]);
        assert.equal((await node.vault.get('a', 's0'))?.origin, 'again');
        assert.deepEqual([...((await node.vault.get('b', 's5'))?.value ?? [])], [11, 0, 255]);
        assert.equal((await node.vault.get('b', 's5'))?.at, 't11');
        await node.close();
      } finally {
        await again.close();
      }
    });

    it('drops the values named, in one write, and none other; a name not kept is nothing to do', {
      skip,
    }, async () => {
      const opened = await stores.openNode('vlt-drop', 'converge');
      const kept = (secret: string) => ({
        module: 'm',
        secret,
        entry: { value: new Uint8Array([1, 2]), origin: secret, at: secret },
      });
      await opened.vault.put(kept('key'), kept('key (rotating)'), kept('other'));
      await opened.vault.drop(
        { module: 'm', secret: 'key (rotating)' },
        { module: 'm', secret: 'nope' },
      );
      await opened.vault.drop();
      assert.equal(await opened.vault.get('m', 'key (rotating)'), undefined);
      await opened.close();
      const again = await subject.reopen();
      try {
        const node = await again.openNode('vlt-drop', 'converge');
        assert.deepEqual((await node.vault.kept()).map((item) => item.secret).sort(), [
          'key',
          'other',
        ]);
        assert.equal(await node.vault.get('m', 'key (rotating)'), undefined);
        assert.deepEqual([...((await node.vault.get('m', 'key'))?.value ?? [])], [1, 2]);
        await node.close();
      } finally {
        await again.close();
      }
    });

    it('names what it keeps without opening it, and opens the modules asked for alone', {
      skip,
    }, async () => {
      const opened = await stores.openNode('vlt4', 'converge');
      const entry = (text: string) => ({
        value: new TextEncoder().encode(text),
        origin: 'minted',
        at: 'now',
      });
      await opened.vault.put(
        { module: 'a', secret: 'one', entry: entry('a-one') },
        { module: 'b', secret: 'two', entry: entry('b-two') },
      );
      await opened.close();
      // Berth as someone whose identity opens none of them: naming them needs none.
      sealing = ageSeal(heldKeys(BOB.identity));
      try {
        const node = await stores.openNode('vlt4', 'converge');
        const names = (await node.vault.kept()).map((item) => `${item.module}/${item.secret}`);
        assert.deepEqual(names.sort(), ['a/one', 'b/two']);
        assert.deepEqual(await node.vault.all(new Set(['c'])), [], 'a module that keeps none');
        await assert.rejects(node.vault.all(new Set(['b'])), VaultError);
        await node.close();
      } finally {
        sealing = ageSeal(heldKeys(ALICE.identity));
      }
      const node = await stores.openNode('vlt4', 'converge');
      const some = await node.vault.all(new Set(['b']));
      assert.deepEqual(
        some.map((item) => [item.module, item.secret, new TextDecoder().decode(item.value)]),
        [['b', 'two', 'b-two']],
      );
      await node.close();
    });

    it('seals every value and the key: another identity is refused in words, and nothing opens', {
      skip,
    }, async () => {
      const opened = await stores.openNode('sealed', 'take');
      await opened.vault.put({
        module: 'gitea',
        secret: 'db_password',
        entry: { value: new TextEncoder().encode('alice-only'), origin: 'minted', at: 'now' },
      });
      await opened.vault.fingerprintKey();
      await opened.close();
      sealing = ageSeal(heldKeys(BOB.identity));
      try {
        const node = await stores.openNode('sealed', 'converge');
        await assert.rejects(
          node.vault.get('gitea', 'db_password'),
          (error: Error) =>
            error instanceof VaultError &&
            error.message ===
              'the sealed value of db_password of gitea on sealed cannot be opened with the identity berth was given: it was sealed to other recipients',
        );
        await assert.rejects(
          node.vault.fingerprintKey(),
          /fingerprint key of sealed cannot be opened/,
        );
        await assert.rejects(node.vault.all(), VaultError);
        await node.close();
        sealing = ageSeal(heldKeys(undefined));
        const none = await stores.openNode('sealed', 'converge');
        await assert.rejects(
          none.vault.get('gitea', 'db_password'),
          /berth needs its age identity to open the sealed value of db_password of gitea on sealed, and found none: it looked at the identity berth was given \(none\)/,
        );
        await none.close();
      } finally {
        sealing = ageSeal(heldKeys(ALICE.identity));
      }
    });

    it('reseals to the recipients of now; a value it cannot open is named and kept as it was', {
      skip,
    }, async () => {
      const opened = await stores.openNode('rekey', 'take');
      await opened.vault.put({
        module: 'm',
        secret: 'ours',
        entry: { value: new TextEncoder().encode('ours-value'), origin: 'minted', at: 'now' },
      });
      await opened.vault.fingerprintKey();
      await opened.close();
      // A value sealed to Carol alone, which Alice cannot open.
      sealing = ageSeal(heldKeys(ALICE.identity, [CAROL.recipient]));
      const carols = await stores.openNode('rekey', 'take');
      await carols.vault.put({
        module: 'm',
        secret: 'carols',
        entry: { value: new TextEncoder().encode('carol-value'), origin: 'found', at: 'then' },
      });
      await carols.close();
      try {
        // Bob joins and Alice leaves: Alice reseals to Bob.
        sealing = ageSeal(heldKeys(ALICE.identity, [BOB.recipient]));
        const node = await stores.openNode('rekey', 'rekey');
        assert.deepEqual(await node.vault.reseal(), {
          resealed: 2,
          unopened: ['carols of m on rekey'],
        });
        await node.close();
        sealing = ageSeal(heldKeys(ALICE.identity));
        const alice = await stores.openNode('rekey', 'converge');
        await assert.rejects(alice.vault.get('m', 'ours'), /sealed to other recipients/);
        await alice.close();
        sealing = ageSeal(heldKeys(BOB.identity));
        const bob = await stores.openNode('rekey', 'converge');
        assert.equal(
          new TextDecoder().decode((await bob.vault.get('m', 'ours'))?.value),
          'ours-value',
        );
        await bob.vault.fingerprintKey();
        await bob.close();
        sealing = ageSeal(heldKeys(CAROL.identity));
        const carol = await stores.openNode('rekey', 'converge');
        const kept = await carol.vault.get('m', 'carols');
        assert.equal(new TextDecoder().decode(kept?.value), 'carol-value');
        assert.equal(kept?.origin, 'found');
        await carol.close();
      } finally {
        sealing = ageSeal(heldKeys(ALICE.identity));
      }
    });

    it('keeps one CA for the state: the first of two kept at once, its certificate read with no identity, its key sealed', {
      skip,
    }, async () => {
      const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
      const made = (name: string) => ({
        certificate: `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`,
        key: new TextEncoder().encode(`the key of ${name}`),
        at: `2026-11-21T07:00:0${name.length}.000Z`,
      });
      assert.equal(await stores.readCa(), undefined, 'none before its first need');
      // Two berths at once, as another process (or controller) would be.
      const other = await subject.reopen();
      try {
        const [first, second] = await Promise.all([
          stores.keepCa(made('ours')),
          other.keepCa(made('theirs')),
        ]);
        assert.equal(first.certificate, second.certificate, 'both answer the same CA');
        assert.ok(
          [made('ours').certificate, made('theirs').certificate].includes(first.certificate),
        );
        const winner = first.certificate === made('ours').certificate ? 'ours' : 'theirs';
        assert.equal(text(await second.key()), `the key of ${winner}`);
        // Kept once: a third berth later keeps nothing of its own.
        const later = await other.keepCa(made('later'));
        assert.equal(later.certificate, first.certificate);
        assert.equal(later.at, made(winner).at);
      } finally {
        if (other !== stores) await other.close();
      }
      const again = await subject.reopen();
      try {
        const kept = await again.readCa();
        assert.ok(kept);
        const winner = kept.certificate.includes('ours') ? 'ours' : 'theirs';
        assert.equal(text(await kept.key()), `the key of ${winner}`);
        // Berth as someone whose identity opens nothing: the certificate is public all the same.
        sealing = ageSeal(heldKeys(BOB.identity));
        const bobs = await again.readCa();
        assert.equal(bobs?.certificate, kept.certificate);
        await assert.rejects(
          bobs?.key() ?? Promise.resolve(),
          (error: Error) =>
            error instanceof VaultError &&
            error.message ===
              "the sealed key of the state's CA cannot be opened with the identity berth was given: it was sealed to other recipients",
        );
        // Alice reseals to Bob and Carol; then Bob opens it, and Alice no longer does.
        sealing = ageSeal(heldKeys(ALICE.identity, [BOB.recipient, CAROL.recipient]));
        assert.deepEqual(await again.resealCa(), { resealed: 1, unopened: [] });
        sealing = ageSeal(heldKeys(BOB.identity));
        assert.equal(
          text(await ((await again.readCa())?.key() ?? new Uint8Array())),
          `the key of ${winner}`,
        );
        sealing = ageSeal(heldKeys(ALICE.identity));
        assert.deepEqual(await again.resealCa(), { resealed: 0, unopened: ["the state's CA"] });
        sealing = ageSeal(heldKeys(CAROL.identity));
        assert.equal(
          text(await ((await again.readCa())?.key() ?? new Uint8Array())),
          `the key of ${winner}`,
          'kept as it was',
        );
        // Carol reseals to Alice alone, as the suite began.
        sealing = ageSeal(heldKeys(CAROL.identity, [ALICE.recipient]));
        assert.deepEqual(await again.resealCa(), { resealed: 1, unopened: [] });
      } finally {
        sealing = ageSeal(heldKeys(ALICE.identity));
        if (again !== stores) await again.close();
      }
    });

    it(`finds a kept preview by digest, and keeps a node's latest ${KEPT_PREVIEWS}`, {
      skip,
    }, async () => {
      const opened = await stores.openNode('prv', 'converge');
      for (let n = 1; n <= KEPT_PREVIEWS + 1; n++) await opened.keepPreview(preview('prv', n));
      await opened.close();
      const again = await stores.openNode('prv', 'converge');
      assert.equal(
        await again.findPreview(preview('prv', 1).digest),
        undefined,
        'the oldest is gone',
      );
      assert.deepEqual(await again.findPreview(preview('prv', 2).digest), preview('prv', 2));
      assert.deepEqual(
        await again.findPreview(preview('prv', KEPT_PREVIEWS + 1).digest),
        preview('prv', KEPT_PREVIEWS + 1),
      );
      await again.close();
      const other = await stores.openNode('prv-other', 'converge');
      assert.equal(await other.findPreview(preview('prv', 2).digest), undefined);
      await other.close();
    });

    it("a kept preview's basis comes back as it was kept, in the act and after it", {
      skip,
    }, async () => {
      const basis = {
        node: 'bas',
        scope: { command: 'converge', filter: 'gitea' },
        assigned: ['gitea', 'postgres'],
        definitions: { gitea: 'a'.repeat(64), postgres: 'b'.repeat(64) },
        survey: {
          gitea: {
            data: [{ path: '/var/lib/gitea', found: true }],
            files: { '/etc/gitea/app.ini': { found: false } },
          },
        },
        checks: { gitea: { code: 3, last: 'naïve “quotes” ✓ \u0000 \\ end' } },
        nested: [[1, 2.5, 0], [null, true, false], { deep: { deeper: ['x'] } }],
      };
      const kept: KeptPreview = { ...preview('bas', 7), basis };
      const opened = await stores.openNode('bas', 'converge');
      await opened.keepPreview(kept);
      assert.deepEqual(await opened.findPreview(kept.digest), kept);
      await opened.close();
      const again = await (await subject.reopen()).openNode('bas', 'converge');
      assert.deepEqual(await again.findPreview(kept.digest), JSON.parse(JSON.stringify(kept)));
      await again.close();
    });

    it('a digest kept again counts as the newest: it outlives those kept after it first', {
      skip,
    }, async () => {
      const opened = await stores.openNode('again', 'converge');
      for (let n = 1; n <= KEPT_PREVIEWS; n++) await opened.keepPreview(preview('again', n));
      const renewed = { ...preview('again', 1), at: '2026-11-21T08:00:00.000Z' };
      await opened.keepPreview(renewed);
      await opened.keepPreview(preview('again', KEPT_PREVIEWS + 1));
      await opened.close();
      const again = await stores.openNode('again', 'converge');
      assert.deepEqual(await again.findPreview(renewed.digest), renewed, 'kept once, as kept last');
      assert.equal(await again.findPreview(preview('again', 2).digest), undefined, 'the oldest');
      assert.deepEqual(await again.findPreview(preview('again', 3).digest), preview('again', 3));
      await again.close();
    });

    it("keeps a node's newest survey whole, read back without its lock by another opening", {
      skip,
    }, async () => {
      // Words as a preview writes them: a diff, quotes, accents, a NUL a file held.
      const said =
        'update gitea:\n  write /etc/gitea/app.ini\n    -name = "naïve ✓"\n    +x\u0000y';
      const first = survey('srv-a', '2026-11-21T09:00:00.000Z', said);
      const opened = await stores.openNode('srv-a', 'converge');
      await opened.keepSurvey(first);
      // Read while the node is held: a reader never waits for an act.
      assert.deepEqual(await stores.readSurveys(['srv-a']), [first]);
      const newer = {
        ...survey('srv-a', '2026-11-21T09:05:00.000Z', ''),
        refused: 'srv-a cannot be reached: ssh said no',
        report: {
          steps: [],
          blockers: [],
          outcome: 'refused' as const,
          code: 'unreachable' as const,
        },
      };
      await opened.keepSurvey(newer);
      await opened.close();
      const again = await subject.reopen();
      assert.deepEqual(
        await again.readSurveys(['srv-a']),
        [newer],
        'the newest, in place of the one before',
      );
    });

    it("keeps a survey's typed preview and refusal, read back through their schemas", {
      skip,
    }, async () => {
      const typed: KeptSurvey = {
        survey_version: 2,
        node: 'typed-t',
        at: '2026-11-21T09:30:00.000Z',
        actor: 'alice',
        via: 'api',
        report: {
          digest: 'f'.repeat(64),
          steps: [],
          blockers: [
            {
              because: 'held-not-managed',
              module: 'redis',
              held: { kind: 'data', paths: ['/var/lib/redis'] },
            },
          ],
          outcome: 'previewed',
        },
        result: {
          command: 'converge',
          node: 'typed-t',
          preview: {
            plan: {
              modules: [],
              blockers: [
                {
                  because: 'held-not-managed',
                  module: 'redis',
                  held: { kind: 'data', paths: ['/var/lib/redis'] },
                },
              ],
            },
            digest: 'f'.repeat(64),
            nothingToDo: false,
            facts: { host: 'srv-t.example' },
          },
        },
        facts: { host: 'srv-t.example' },
      };
      const opened = await stores.openNode('typed-t', 'converge');
      await opened.keepSurvey(typed);
      const refused: KeptSurvey = {
        survey_version: 2,
        node: 'typed-u',
        at: '2026-11-21T09:31:00.000Z',
        actor: 'alice',
        via: 'cli',
        report: { steps: [], blockers: [], outcome: 'refused', code: 'unreachable' },
        refusal: {
          kind: 'unreachable',
          code: 'unreachable',
          node: 'typed-u',
          message: 'ssh said no',
        },
      };
      await opened.close();
      const other = await stores.openNode('typed-u', 'converge');
      await other.keepSurvey(refused);
      await other.close();
      const again = await subject.reopen();
      assert.deepEqual(await again.readSurveys(['typed-t', 'typed-u']), [typed, refused]);
    });

    it('reads the surveys of the nodes asked for alone, in name order; a node never surveyed has none', {
      skip,
    }, async () => {
      for (const node of ['srv-c', 'srv-b']) {
        const opened = await stores.openNode(node, 'converge');
        await opened.keepSurvey(survey(node, '2026-11-21T09:10:00.000Z', `converge ${node}`));
        await opened.close();
      }
      await (await stores.openNode('srv-never', 'assign')).close();
      const names = (surveys: KeptSurvey[]) => surveys.map((item) => item.node);
      assert.deepEqual(names(await stores.readSurveys(['srv-c', 'srv-never', 'srv-b'])), [
        'srv-b',
        'srv-c',
      ]);
      assert.deepEqual(
        names(await stores.readSurveys()).filter((node) => node.startsWith('srv-')),
        ['srv-a', 'srv-b', 'srv-c'],
      );
      assert.deepEqual(await stores.readSurveys(['not-here', 'Not A Name']), []);
    });

    it('refuses a survey kept once the node was let go, and keeps the one before', {
      skip,
    }, async () => {
      const opened = await stores.openNode('srv-late', 'converge');
      const kept = survey('srv-late', '2026-11-21T09:20:00.000Z', 'kept');
      await opened.keepSurvey(kept);
      await opened.close();
      await assert.rejects(
        opened.keepSurvey(survey('srv-late', '2026-11-21T09:21:00.000Z', 'late')),
        StoreError,
      );
      assert.deepEqual(await stores.readSurveys(['srv-late']), [kept]);
    });

    it('journals acts per node in order, and reads the whole journal oldest first', {
      skip,
    }, async () => {
      const a = await stores.openNode('jrn-a', 'assign');
      await a.journal(entry('jrn-a', '2026-11-21T08:00:01.000Z'));
      await a.journal(entry('jrn-a', '2026-11-21T08:00:03.000Z', 'converge'));
      await a.close();
      const b = await stores.openNode('jrn-b', 'assign');
      await b.journal(entry('jrn-b', '2026-11-21T08:00:02.000Z'));
      await b.close();
      await stores.journalUnplaced({
        ...entry('No Such Node', '2026-11-21T08:00:04.000Z'),
        outcome: 'refused',
        refusal: { kind: 'failed', code: 'failed', command: 'assign', message: 'bad name' },
      });
      const mine = (await stores.readJournal())
        .flatMap((line) => ('entry' in line ? [line.entry] : []))
        .filter((item) => item.at.startsWith('2026-11-21T08:00:0'));
      assert.deepEqual(
        mine.map((item) => `${item.node} ${item.act}`),
        ['jrn-a assign', 'jrn-b assign', 'jrn-a converge', 'No Such Node assign'],
      );
      assert.deepEqual(mine[3] && 'refusal' in mine[3] ? mine[3].refusal : undefined, {
        kind: 'failed',
        code: 'failed',
        command: 'assign',
        message: 'bad name',
      });
    });

    it("keeps each act's target, digest and typed outcome; reads the acts a query asks for", {
      skip,
    }, async () => {
      const failed: NewJournalEntry = {
        at: '2031-01-01T00:00:01.000Z',
        actor: 'alice',
        via: 'cli',
        act: 'converge',
        node: 'jq-a',
        target: '@jq',
        digest: 'd'.repeat(64),
        outcome: 'failed',
        code: 'hook_failed',
        steps: [{ kind: 'write', module: 'app', path: '/etc/app.conf' }],
        blockers: [],
        refusal: { kind: 'failed', code: 'failed', command: 'converge', message: 'start of app' },
      };
      const a = await stores.openNode('jq-a', 'converge');
      await a.journal(failed);
      await a.journal(entry('jq-a', '2031-01-01T00:00:03.000Z'));
      await a.close();
      const b = await stores.openNode('jq-b', 'converge');
      const blocker: Blocker = {
        because: 'held-not-managed',
        module: 'app',
        held: { kind: 'data', paths: ['/var/lib/app'] },
      };
      await b.journal({
        ...entry('jq-b', '2031-01-01T00:00:02.000Z', 'converge'),
        target: '@jq',
        outcome: 'refused',
        code: 'blocked',
        blockers: [blocker],
      });
      await b.close();
      await stores.journalUnplaced({
        ...entry('@jq', '2031-01-01T00:00:04.000Z', 'converge'),
        target: '@jq',
        outcome: 'refused',
        code: 'not_granted',
        refusal: {
          kind: 'not-granted',
          code: 'not_granted',
          subject: 'alice',
          command: 'converge',
          target: '@jq',
          what: 'it',
        },
      });

      const read = async (query: JournalQuery) =>
        (await stores.readJournal(query)).flatMap((line) => ('entry' in line ? [line.entry] : []));
      const acts = async (query: JournalQuery) =>
        (await read(query)).map((item) => `${item.node} ${item.at.slice(17, 19)}`);
      const [kept] = await read({ about: ['jq-a'], tail: 2 });
      assert.deepEqual(JSON.parse(JSON.stringify(kept)), { entry_version: 3, ...failed });
      assert.deepEqual((await read({ about: ['jq-b'] }))[0]?.blockers, [blocker]);
      assert.deepEqual(await acts({ about: ['jq-a'] }), ['jq-a 01', 'jq-a 03']);
      // A target: the acts asked for it on each node, and the one that reached none.
      assert.deepEqual(await acts({ about: ['@jq'] }), ['jq-a 01', 'jq-b 02', '@jq 04']);
      const all = ['jq-a', 'jq-b', '@jq'];
      assert.deepEqual(await acts({ about: all, since: '2031-01-01T00:00:02.000Z' }), [
        'jq-b 02',
        'jq-a 03',
        '@jq 04',
      ]);
      assert.deepEqual(await acts({ about: all, tail: 2 }), ['jq-a 03', '@jq 04']);
      assert.deepEqual(await acts({ since: '2031-01-01T00:00:03.500Z' }), ['@jq 04']);
      assert.deepEqual(await acts({ about: ['jq-none'] }), []);
    });

    it("reads an earlier berth's entry after the upgrade in its words, unchanged", {
      skip,
    }, async (t) => {
      if (!subject.writtenBefore) return t.skip('no earlier berth kept these stores');
      // What berth wrote before entries kept their typed outcome (entry_version 2).
      const earlier = {
        entry_version: 2,
        at: '2030-05-01T00:00:01.000Z',
        actor: 'alice',
        via: 'cli',
        act: 'converge',
        node: 'old-a',
        target: '@old',
        digest: 'e'.repeat(64),
        outcome: 'failed',
        code: 'hook_failed',
        steps: [{ kind: 'write', module: 'app', path: '/etc/app.conf' }],
        blockers: [],
        said: 'old-a: wrote /etc/app.conf',
        error: "app's start failed (exit 1)",
      };
      await subject.writtenBefore('old-a', JSON.stringify(earlier));
      const [read] = await stores.readJournal({ about: ['old-a'] });
      assert.ok(read && 'entry' in read);
      // Its words are read as they were said (words/journal.ts shows them so).
      assert.deepEqual(JSON.parse(JSON.stringify(read.entry)), earlier, 'kept as written');
    });

    it("keeps a new entry's typed result and refusal, read back through their schemas", {
      skip,
    }, async () => {
      const { result, refusal, entry } = stoppedConverge('typed-a');
      const node = await stores.openNode('typed-a', 'converge');
      await node.journal(entry);
      await node.close();
      const [read] = await (await subject.reopen()).readJournal({ about: ['typed-a'] });
      assert.ok(read && 'entry' in read && read.entry.entry_version === 3);
      // What its words are made from, whole (tests/stores/journal-words.test.ts makes them).
      assert.deepEqual(read.entry.result, result);
      assert.deepEqual(read.entry.refusal, refusal);
    });

    it('keeps a name of 60,000 characters cut to 2,000 in the journal', { skip }, async () => {
      await stores.journalUnplaced(entry('x'.repeat(60_000), '2026-11-21T09:00:00.000Z'));
      const kept = (await stores.readJournal()).flatMap((line) =>
        'entry' in line && line.entry.at === '2026-11-21T09:00:00.000Z' ? [line.entry] : [],
      );
      assert.equal(kept.length, 1);
      assert.ok((kept[0]?.node.length ?? 0) < 2_100);
      assert.ok(kept[0]?.node.endsWith('(60000 characters)'));
    });

    it('serialises acts on one node: the second opening waits for the first to close', {
      skip,
    }, async () => {
      const first = await stores.openNode('lck', 'converge');
      let secondOpened = false;
      const second = stores.openNode('lck', 'assign').then((store) => {
        secondOpened = true;
        return store;
      });
      // The stores answer an act on another node, asked after the second: it still waits.
      const other = await stores.openNode('lck-other', 'assign');
      await other.close();
      assert.equal(secondOpened, false, 'the second act waits');
      await first.close();
      const store = await second;
      await store.close();
    });

    it('runs acts on different nodes at once', { skip }, async () => {
      // A wait for the other's lock would end in a refusal at the deadline.
      const a = await stores.openNode('par-a', 'converge');
      const b = await stores.openNode('par-b', 'assign');
      try {
        assert.deepEqual(
          (await stores.lockHolders(['par-a', 'par-b'])).map((held) => [held.node, held.act]),
          [
            ['par-a', 'converge'],
            ['par-b', 'assign'],
          ],
        );
      } finally {
        await b.close();
        await a.close();
      }
    });

    it('names the holder, its act, its node and since when, once the wait is over', {
      skip,
    }, async () => {
      const held = await stores.openNode('busy', 'converge');
      try {
        const holders = await stores.lockHolders();
        const holder = holders.find((item) => item.node === 'busy');
        assert.equal(holder?.act, 'converge');
        assert.ok(holder && !Number.isNaN(Date.parse(holder.since)));
        assert.deepEqual(
          (await stores.lockHolders(['busy'])).map((item) => [item.node, item.act]),
          [['busy', 'converge']],
        );
        assert.deepEqual(await stores.lockHolders(['idle', 'never-seen']), []);
        await assert.rejects(stores.openNode('busy', 'assign'), (error: unknown) => {
          assert.ok(error instanceof StoreError, String(error));
          assert.match(
            error.message,
            /holds the lock of node busy \(converge, since \d{4}-\d\d-\d\dT[\d:.]+Z\) and did not let go within 0s|holds the lock of node busy \(converge, since [^)]+\) and did not let go/,
          );
          return true;
        });
      } finally {
        await held.close();
      }
      assert.equal(
        (await stores.lockHolders()).find((item) => item.node === 'busy'),
        undefined,
      );
      const after = await stores.openNode('busy', 'assign');
      await after.close();
    });
  });
}
