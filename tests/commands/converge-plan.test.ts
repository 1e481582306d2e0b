import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import {
  type ConvergeInput,
  modulesInScope,
  modulesToSurvey,
  planConverge,
} from '../../src/commands/converge-plan.ts';
import type { Step } from '../../src/commands/steps/step.ts';
import type { ModuleSurvey } from '../../src/commands/survey.ts';
import type { PathFacts } from '../../src/machines/machine.ts';
import { type CatalogEntry, ModuleDefinitionSchema } from '../../src/model/catalog.ts';
import type { Holdings, NodeRecord } from '../../src/model/state.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const SINCE = '2026-01-01T00:00:00.000Z';

/** A catalog entry as the catalog gives it: checked, each file's text at hand. */
function entry(name: string, definition: unknown): [string, CatalogEntry] {
  const parsed = v.parse(ModuleDefinitionSchema, definition);
  const files = Object.fromEntries(
    Object.entries(parsed.files).map(([path, file]) => [
      path,
      { ...file, content: file.content ?? '' },
    ]),
  );
  return [name, { name, definition: { ...parsed, files } }];
}

const DB = entry('db', {
  data: ['/var/lib/db'],
  secrets: { password: { path: '/etc/db/password', bytes: 16 } },
  files: { '/etc/db/db.conf': { mode: '0640', content: 'password={{secret password}}\n' } },
  start: 'db-start',
  stop: 'db-stop',
});
const APP = entry('app', {
  needs: ['db'],
  data: ['/var/lib/app'],
  files: { '/etc/app/app.ini': { content: 'app\n' } },
  start: 'app-start',
  stop: 'app-stop',
});
const ENTRIES = new Map([DB, APP]);

function record(assigned: string[], managed: Record<string, boolean> = {}): NodeRecord {
  return {
    assigned,
    managed: Object.fromEntries(
      Object.entries(managed).map(([module, started]) => [
        module,
        { since: SINCE, via: 'converge' as const, started },
      ]),
    ),
  };
}

const file = (content: string, mode = '0644'): PathFacts => ({
  kind: 'file',
  size: content.length,
  mode,
  uid: 0,
  gid: 0,
  bytes: bytes(content),
});
const dir = (empty = false): PathFacts => ({
  kind: 'directory',
  empty,
  mode: '0755',
  uid: 0,
  gid: 0,
});
const MISSING: PathFacts = { kind: 'missing' };

/** A survey from facts; holdings found where a fact is not missing (fingerprints left out). */
function survey(
  facts: Record<string, PathFacts>,
  secrets: Record<string, string> = {},
): ModuleSurvey {
  const map = new Map(Object.entries(facts));
  const holdings: Holdings = { data: [], secrets: {}, files: {} };
  for (const [path, fact] of map) {
    const found = fact.kind !== 'missing';
    const secret = Object.entries(secrets).find(([, at]) => at === path)?.[0];
    if (secret) holdings.secrets[secret] = { path, found };
    else if (fact.kind === 'file') holdings.files[path] = { found, mode: fact.mode };
    else if (fact.kind === 'missing' && path.startsWith('/etc')) holdings.files[path] = { found };
    else holdings.data.push({ path, found: found && !(fact.kind === 'directory' && fact.empty) });
  }
  // No owner or group is named in these definitions: no ids to know.
  return { holdings, facts: map, accounts: { users: new Map(), groups: new Map() } };
}

const EMPTY_DB = survey(
  { '/var/lib/db': MISSING, '/etc/db/password': MISSING, '/etc/db/db.conf': MISSING },
  { password: '/etc/db/password' },
);
const EMPTY_APP = survey({ '/var/lib/app': MISSING, '/etc/app/app.ini': MISSING });

/** The db as a converge left it: everything in place, password "s3cret". */
const HEALTHY_DB: Record<string, PathFacts> = {
  '/var/lib/db': dir(),
  '/etc/db/password': file('s3cret\n', '0600'),
  '/etc/db/db.conf': file('password=s3cret\n', '0640'),
};
const VAULT = new Map([['db/password', bytes('s3cret\n')]]);

function plan(input: Partial<ConvergeInput> & { record: NodeRecord }) {
  return planConverge({
    node: 'box',
    entries: ENTRIES,
    surveys: new Map(),
    vault: new Map(),
    ...input,
  }).plan;
}

const dos = (steps: Step[]) => steps.map((step) => `${step.do} ${step.module}`);

describe('planConverge', () => {
  describe('install', () => {
    it('manages, creates, mints, writes and starts, in that order', () => {
      const result = plan({ record: record(['db']), surveys: new Map([['db', EMPTY_DB]]) });
      assert.deepEqual(result.blockers, []);
      assert.equal(result.modules.length, 1);
      assert.equal(result.modules[0]?.action, 'install');
      assert.deepEqual(result.modules[0]?.steps, [
        { do: 'manage', module: 'db', started: false },
        { do: 'mkdir', module: 'db', path: '/var/lib/db' },
        {
          do: 'mint',
          module: 'db',
          secret: 'password',
          path: '/etc/db/password',
          bytes: 16,
          mode: '0600',
        },
        {
          do: 'write',
          module: 'db',
          path: '/etc/db/db.conf',
          mode: '0640',
          why: { because: 'install' },
        },
        { do: 'start', module: 'db', script: 'db-start' },
      ]);
    });

    it('restores a secret the vault still holds instead of minting over it', () => {
      const result = plan({
        record: record(['db']),
        surveys: new Map([['db', EMPTY_DB]]),
        vault: VAULT,
      });
      const steps = result.modules[0]?.steps ?? [];
      assert.deepEqual(
        steps.filter((step) => step.do === 'restore' || step.do === 'mint'),
        [
          {
            do: 'restore',
            module: 'db',
            secret: 'password',
            path: '/etc/db/password',
            mode: '0600',
          },
        ],
      );
    });

    it('installs what a module needs before it, whatever order they are listed in', () => {
      const result = plan({
        record: record(['app', 'db']),
        surveys: new Map([
          ['app', EMPTY_APP],
          ['db', EMPTY_DB],
        ]),
      });
      assert.deepEqual(
        result.modules.map((item) => [item.module, item.action]),
        [
          ['db', 'install'],
          ['app', 'install'],
        ],
      );
      // A module without a start hook is managed as started at once.
      const noStart = new Map([entry('plain', { data: ['/srv/plain'] })]);
      const alone = plan({
        record: record(['plain']),
        entries: noStart,
        surveys: new Map([['plain', survey({ '/srv/plain': MISSING })]]),
      });
      assert.deepEqual(alone.modules[0]?.steps, [
        { do: 'manage', module: 'plain', started: true },
        { do: 'mkdir', module: 'plain', path: '/srv/plain' },
      ]);
    });
  });

  describe('update', () => {
    const managedDb = record(['db'], { db: true });

    it('plans nothing for a module as it should be', () => {
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(HEALTHY_DB, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result, { modules: [], blockers: [] });
    });

    it('plans a reload owed by one that failed, though nothing differs, until it succeeds', () => {
      const reloading = new Map([
        [
          'db',
          {
            ...(DB[1] as { definition: object }),
            definition: { ...(DB[1] as { definition: object }).definition, reload: 'db-reload' },
          } as CatalogEntry,
        ],
      ]);
      const owed = record(['db'], { db: true });
      (owed.managed.db as { pending?: 'reload'[] }).pending = ['reload'];
      const surveys = new Map([['db', survey(HEALTHY_DB, { password: '/etc/db/password' })]]);
      const result = plan({ record: owed, entries: reloading, surveys, vault: VAULT });
      assert.deepEqual(result.modules, [
        {
          module: 'db',
          action: 'update',
          steps: [{ do: 'reload', module: 'db', script: 'db-reload', pending: true }],
        },
      ]);
      const paid = plan({ record: managedDb, entries: reloading, surveys, vault: VAULT });
      assert.deepEqual(paid, { modules: [], blockers: [] }, 'nothing owed, nothing planned');
    });

    it('writes a file that differs, because it differs', () => {
      const facts = { ...HEALTHY_DB, '/etc/db/db.conf': file('password=edited\n', '0640') };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.modules, [
        {
          module: 'db',
          action: 'update',
          steps: [
            {
              do: 'write',
              module: 'db',
              path: '/etc/db/db.conf',
              mode: '0640',
              // What the definition does not name is kept from the file as found.
              uid: 0,
              gid: 0,
              why: {
                because: 'differs',
                // The secret's value is never shown, on either side: s3cret is too short
                // to mask in place, so its line is masked whole.
                diff: [
                  '--- /etc/db/db.conf on box',
                  '+++ /etc/db/db.conf as berth writes it',
                  '@@ -1 +1 @@',
                  '-password=edited',
                  '+[a line holding secret password]',
                ],
              },
            },
            // A module berth runs is told of the change; this one has no reload to run.
            { do: 'reload', module: 'db', script: undefined },
          ],
        },
      ]);
    });

    it('writes a file whose mode drifted, saying what it was and what it is to be', () => {
      const facts = { ...HEALTHY_DB, '/etc/db/db.conf': file('password=s3cret\n', '0666') };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.modules[0]?.steps, [
        {
          do: 'write',
          module: 'db',
          path: '/etc/db/db.conf',
          mode: '0640',
          uid: 0,
          gid: 0,
          why: { because: 'drift', drift: [{ what: 'mode', was: '0666', want: '0640' }] },
        },
        { do: 'reload', module: 'db', script: undefined },
      ]);
    });

    it('creates a missing data directory and writes a missing file', () => {
      const facts = { ...HEALTHY_DB, '/var/lib/db': MISSING, '/etc/db/db.conf': MISSING };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.modules[0]?.steps, [
        { do: 'mkdir', module: 'db', path: '/var/lib/db' },
        {
          do: 'write',
          module: 'db',
          path: '/etc/db/db.conf',
          mode: '0640',
          why: { because: 'missing' },
        },
        { do: 'reload', module: 'db', script: undefined },
      ]);
    });

    it('restores a managed secret gone from the machine, from the vault', () => {
      const facts = { ...HEALTHY_DB, '/etc/db/password': MISSING };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.blockers, []);
      assert.deepEqual(result.modules[0]?.steps, [
        {
          do: 'restore',
          module: 'db',
          secret: 'password',
          path: '/etc/db/password',
          mode: '0600',
        },
        { do: 'reload', module: 'db', script: undefined },
      ]);
    });

    it('mints a secret neither machine nor vault holds, and writes what carries it', () => {
      const facts = { ...HEALTHY_DB, '/etc/db/password': MISSING };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
      });
      assert.deepEqual(result.modules[0]?.steps, [
        {
          do: 'mint',
          module: 'db',
          secret: 'password',
          path: '/etc/db/password',
          bytes: 16,
          mode: '0600',
        },
        {
          do: 'write',
          module: 'db',
          path: '/etc/db/db.conf',
          mode: '0640',
          uid: 0,
          gid: 0,
          why: { because: 'carries-minted-secret' },
        },
        { do: 'reload', module: 'db', script: undefined },
      ]);
    });

    it('is blocked by a secret on the machine that differs from the vault', () => {
      const facts = { ...HEALTHY_DB, '/etc/db/password': file('changed\n', '0600') };
      const result = plan({
        record: managedDb,
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.blockers, [
        { because: 'secret-differs', module: 'db', secret: 'password', path: '/etc/db/password' },
      ]);
    });

    it('starts a managed module whose start hook has not run', () => {
      const result = plan({
        record: record(['db'], { db: false }),
        surveys: new Map([['db', survey(HEALTHY_DB, { password: '/etc/db/password' })]]),
        vault: VAULT,
      });
      assert.deepEqual(result.modules[0]?.steps, [
        { do: 'start', module: 'db', script: 'db-start' },
      ]);
    });
  });

  describe('release', () => {
    it('stops then releases, and releases come before installs', () => {
      const other = new Map([...ENTRIES, entry('web', { data: ['/srv/web'] })]);
      const result = plan({
        record: record(['web'], { db: true }),
        entries: other,
        surveys: new Map([['web', survey({ '/srv/web': MISSING })]]),
      });
      assert.deepEqual(
        result.modules.map((item) => [item.module, item.action]),
        [
          ['db', 'release'],
          ['web', 'install'],
        ],
      );
      assert.deepEqual(result.modules[0]?.steps, [
        { do: 'stop', module: 'db', script: 'db-stop' },
        { do: 'release', module: 'db' },
      ]);
    });

    it('releases each module before the modules it needs', () => {
      const result = plan({ record: record([], { db: true, app: true }) });
      assert.deepEqual(dos(result.modules.flatMap((item) => item.steps)), [
        'stop app',
        'release app',
        'stop db',
        'release db',
      ]);
    });

    it('releases a module gone from the catalog without a stop hook', () => {
      const result = plan({ record: record([], { gone: true }) });
      assert.deepEqual(result.modules, [
        { module: 'gone', action: 'release', steps: [{ do: 'release', module: 'gone' }] },
      ]);
    });
  });

  describe('blockers', () => {
    it('a module that does not resolve, with the typed reason', () => {
      const result = plan({ record: record(['app']) });
      assert.deepEqual(result, {
        modules: [],
        blockers: [
          {
            because: 'does-not-resolve',
            module: 'app',
            unresolved: { why: 'need-not-assigned', need: 'db' },
          },
        ],
      });
      const missing = plan({ record: record(['nope']) });
      assert.equal(missing.blockers[0]?.because, 'does-not-resolve');
      assert.deepEqual(
        missing.blockers[0]?.because === 'does-not-resolve' && missing.blockers[0].unresolved.why,
        'not-in-catalog',
      );
      const cyclic = new Map([entry('a', { needs: ['b'] }), entry('b', { needs: ['a'] })]);
      assert.deepEqual(plan({ record: record(['a', 'b']), entries: cyclic }).blockers[0], {
        because: 'does-not-resolve',
        module: 'a',
        unresolved: { why: 'cycle', cycle: ['a', 'b', 'a'] },
      });
    });

    it('a module the machine holds that berth does not manage, with what it holds', () => {
      const facts = { ...HEALTHY_DB, '/var/lib/db': MISSING, '/etc/db/db.conf': MISSING };
      const result = plan({
        record: record(['db']),
        surveys: new Map([['db', survey(facts, { password: '/etc/db/password' })]]),
      });
      assert.deepEqual(result, {
        modules: [],
        blockers: [
          {
            because: 'held-not-managed',
            module: 'db',
            held: { kind: 'secret', names: ['password'] },
          },
        ],
      });
      const data = plan({
        record: record(['db']),
        surveys: new Map([['db', survey(HEALTHY_DB, { password: '/etc/db/password' })]]),
      });
      assert.deepEqual(data.blockers[0], {
        because: 'held-not-managed',
        module: 'db',
        held: { kind: 'data', paths: ['/var/lib/db'] },
      });
    });

    it('a filter on a module whose needs are not running', () => {
      const result = plan({
        record: record(['app', 'db'], { db: false }),
        filter: 'app',
        surveys: new Map([['app', EMPTY_APP]]),
      });
      assert.deepEqual(result, {
        modules: [],
        blockers: [{ because: 'needs-not-running', module: 'app', needs: ['db'] }],
      });
      const running = plan({
        record: record(['app', 'db'], { db: true }),
        filter: 'app',
        surveys: new Map([['app', EMPTY_APP]]),
      });
      assert.deepEqual(running.blockers, []);
      assert.deepEqual(
        running.modules.map((item) => [item.module, item.action]),
        [['app', 'install']],
      );
    });
  });

  it('is pure: the same input plans the same, and the input is left as it was', () => {
    const input: ConvergeInput = {
      node: 'box',
      record: record(['app', 'db'], { gone: true }),
      entries: ENTRIES,
      surveys: new Map([
        ['app', EMPTY_APP],
        ['db', EMPTY_DB],
      ]),
      vault: new Map(VAULT),
    };
    const before = structuredClone(input);
    assert.deepEqual(planConverge(input), planConverge(input));
    assert.deepEqual(input, before);
  });

  it('scope and survey: assigned or managed within the filter; only what resolves is surveyed', () => {
    const mixed = record(['app', 'db', 'nope'], { gone: true });
    assert.deepEqual(modulesInScope(mixed), ['app', 'db', 'gone', 'nope']);
    assert.deepEqual(modulesInScope(mixed, 'db'), ['db']);
    assert.deepEqual([...modulesToSurvey(mixed, ENTRIES).keys()], ['app', 'db']);
    assert.deepEqual([...modulesToSurvey(record(['app']), ENTRIES).keys()], []);
  });
});
