import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { modeOf, snapshot } from '../commands/support.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

/**
 * A state directory of an earlier berth (one state.json, vault.json and previews.json
 * for every node, one journal), built by hand, then opened by the real binary.
 */

const DB = {
  data: ['/var/lib/db'],
  secrets: { password: { path: '/etc/db/password' } },
  files: {
    '/etc/db/db.conf': { mode: '0640', content: 'password={{secret password}}\nport=5432\n' },
  },
  start: 'touch "$BERTH_ROOT/started-db"',
};
const CACHE = {
  secrets: { token: { path: '/etc/cache/token' } },
  start: 'touch "$BERTH_ROOT/started-cache"',
};

const KEY = Buffer.alloc(32, 7).toString('base64');
const PASSWORD = Buffer.from('s3cret\n');
/** A secret that is not text: every byte must come through. */
const TOKEN = Buffer.from([0, 255, 254, 10, 13, 128, 1, 2, 3, 0xc3, 0x28, 0]);
const SINCE = '2025-06-01T10:00:00.000Z';

const HOLDINGS_DB = {
  data: [{ path: '/var/lib/db', found: true }],
  secrets: { password: { path: '/etc/db/password', found: true, fingerprint: 'a'.repeat(32) } },
  files: { '/etc/db/db.conf': { found: true, fingerprint: 'b'.repeat(32), mode: '0640' } },
};
const HOLDINGS_CACHE = {
  data: [],
  secrets: { token: { path: '/etc/cache/token', found: true, fingerprint: 'c'.repeat(32) } },
  files: {},
};

const RECORDS = {
  box: {
    assigned: ['db'],
    managed: { db: { since: SINCE, via: 'take', started: true } },
    account: { takenAt: SINCE, modules: { db: HOLDINGS_DB }, problems: {} },
  },
  web: {
    assigned: ['cache'],
    managed: { cache: { since: SINCE, via: 'converge', started: false } },
    account: {
      takenAt: SINCE,
      modules: { cache: HOLDINGS_CACHE },
      problems: { db: 'db is not valid: why not' },
    },
  },
};

const OLD_STATE = {
  version: 1,
  assignments: { box: RECORDS.box.assigned, web: RECORDS.web.assigned },
  managed: { box: RECORDS.box.managed, web: RECORDS.web.managed },
  accounts: { box: RECORDS.box.account, web: RECORDS.web.account },
};
const OLD_VAULT = {
  key: KEY,
  secrets: {
    'box/db/password': { value: PASSWORD.toString('base64'), origin: 'took', at: SINCE },
    'web/cache/token': { value: TOKEN.toString('base64'), origin: 'minted', at: SINCE },
  },
};
const OLD_JOURNAL = [
  {
    at: '2025-06-01T09:00:00.000Z',
    actor: 'ann',
    via: 'cli',
    act: 'assign',
    node: 'box',
    module: 'db',
    outcome: 'done',
    said: 'box is assigned db',
  },
  {
    at: '2025-06-01T09:30:00.000Z',
    actor: 'bob',
    via: 'api',
    act: 'unassign',
    node: 'web',
    module: 'gone',
    outcome: 'refused',
    said: '',
    error: 'web is not assigned gone',
  },
];
const WEB_PREVIEW = {
  digest: 'd'.repeat(64),
  kind: 'take',
  node: 'web',
  at: SINCE,
  basis: { node: 'web' },
};

describe('the upgrade of a state directory of an earlier berth', () => {
  let world: World;
  let web: string;
  /** The digest of a converge of box, previewed with the records and key of the old directory. */
  let digest: string;
  let boxPreview: unknown;

  beforeEach(async () => {
    world = await makeWorld({ db: DB, cache: CACHE });
    web = join(world.dir, 'web');
    await mkdir(web);
    await world.writeSettings({ nodes: { box: { root: world.root }, web: { root: web } } });
    await world.onBox('/var/lib/db/base', 'rows');
    await world.onBox('/etc/db/password', PASSWORD.toString());
    // Edited by hand since: the converge rewrites it, a change fingerprinted with the key.
    await world.onBox('/etc/db/db.conf', 'password=s3cret\nport=1\n');

    // The preview is made by this berth from box's record and the directory's key, so
    // that its digest is the one the old directory would have kept.
    const box = join(world.state, 'nodes', 'box');
    await mkdir(box, { recursive: true });
    await writeFile(join(box, 'record.json'), JSON.stringify(RECORDS.box));
    await writeFile(
      join(box, 'vault.json'),
      JSON.stringify({
        key: KEY,
        secrets: { 'db/password': OLD_VAULT.secrets['box/db/password'] },
      }),
      { mode: 0o600 },
    );
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, /update db:\n.*\/etc\/db\/db\.conf/);
    digest = digestOf(preview.stdout);
    const [kept] = await readdir(join(box, 'previews'));
    boxPreview = JSON.parse(await readFile(join(box, 'previews', kept ?? ''), 'utf8'));
    await rm(join(world.state, 'nodes'), { recursive: true });

    await writeOldLayout(world.state, [boxPreview, WEB_PREVIEW]);
  });
  afterEach(() => world.cleanup());

  async function writeOldLayout(state: string, previews: unknown[]) {
    await writeFile(join(state, 'state.json'), JSON.stringify(OLD_STATE, null, 2));
    await writeFile(join(state, 'vault.json'), JSON.stringify(OLD_VAULT), { mode: 0o600 });
    await writeFile(join(state, 'previews.json'), JSON.stringify(previews));
    await writeFile(
      join(state, 'journal.jsonl'),
      OLD_JOURNAL.map((entry) => `${JSON.stringify(entry)}\n`).join(''),
    );
    // A lock an earlier berth left when it died: it named only its pid and host.
    await writeFile(join(state, 'lock'), JSON.stringify({ pid: 4_194_000, host: hostname() }));
  }

  async function assertUpgraded(state: string) {
    assert.deepEqual(await readdir(join(state, 'nodes')), ['box', 'web']);
    for (const node of ['box', 'web'] as const) {
      const record = JSON.parse(await readFile(join(state, 'nodes', node, 'record.json'), 'utf8'));
      assert.deepEqual(record, RECORDS[node]);
      const vaultPath = join(state, 'nodes', node, 'vault.json');
      assert.equal(await modeOf(vaultPath), '600');
      assert.equal(await modeOf(join(state, 'nodes', node)), '700');
      const vault = JSON.parse(await readFile(vaultPath, 'utf8'));
      assert.equal(vault.key, KEY, `${node} keeps the directory's fingerprint key`);
    }
    const boxVault = JSON.parse(await readFile(join(state, 'nodes/box/vault.json'), 'utf8'));
    assert.deepEqual(boxVault.secrets, { 'db/password': OLD_VAULT.secrets['box/db/password'] });
    const webVault = JSON.parse(await readFile(join(state, 'nodes/web/vault.json'), 'utf8'));
    assert.deepEqual(Object.keys(webVault.secrets), ['cache/token']);
    assert.deepEqual(Buffer.from(webVault.secrets['cache/token'].value, 'base64'), TOKEN);
    assert.deepEqual(webVault.secrets['cache/token'].origin, 'minted');
    // The kept previews are not carried over: they only served the words of a refused act.
    for (const node of ['box', 'web'])
      for (const name of ['previews', 'previews.json'])
        await assert.rejects(stat(join(state, 'nodes', node, name)), `${node} has no ${name}`);

    // Nothing deleted: the old files are kept, as they were, in before-upgrade/.
    for (const name of ['state.json', 'vault.json', 'previews.json'])
      await assert.rejects(stat(join(state, name)), `${name} is moved out of the way`);
    assert.deepEqual(
      JSON.parse(await readFile(join(state, 'before-upgrade/state.json'), 'utf8')),
      OLD_STATE,
    );
    assert.deepEqual(
      JSON.parse(await readFile(join(state, 'before-upgrade/vault.json'), 'utf8')),
      OLD_VAULT,
    );
    assert.equal(await modeOf(join(state, 'before-upgrade/vault.json')), '600');
    assert.deepEqual(
      JSON.parse(await readFile(join(state, 'before-upgrade/previews.json'), 'utf8')),
      [boxPreview, WEB_PREVIEW],
    );
    assert.equal(await modeOf(join(state, 'before-upgrade')), '700');
    assert.deepEqual(
      (await readdir(state)).filter((name) => name.startsWith('.nodes.')),
      [],
      'no staging directory is left',
    );
  }

  it('is upgraded on first open with nothing lost; history and secrets serve, and a digest previewed before acts', async () => {
    const status = await world.berth('status', '--json');
    assert.equal(status.code, 0, status.stderr);
    const nodes = JSON.parse(status.stdout).nodes as Record<string, unknown>[];
    assert.deepEqual(
      nodes.map((node) => [node.node, node.assigned, node.managed, node.account]),
      [
        ['box', ['db'], RECORDS.box.managed, { takenAt: SINCE }],
        ['web', ['cache'], RECORDS.web.managed, { takenAt: SINCE }],
      ],
    );
    await assertUpgraded(world.state);

    const log = await world.berth('log', '--json');
    assert.equal(log.code, 0, log.stderr);
    assert.deepEqual(
      log.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      OLD_JOURNAL.map((entry) => ({ format_version: 1, ...entry })),
    );
    const words = await world.berth('log');
    assert.match(words.stdout, /ann \(cli\) assign box db: done/);
    assert.match(words.stdout, /bob \(api\) unassign web gone: refused: web is not assigned gone/);

    // The digest previewed before the upgrade still acts: the key came through unchanged.
    const act = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(act.code, 0, act.stderr);
    assert.equal(
      await readFile(join(world.root, 'etc/db/db.conf'), 'utf8'),
      'password=s3cret\nport=5432\n',
    );
    const history = await world.berth('log', '--json');
    const entries = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      entries.slice(0, 2),
      OLD_JOURNAL.map((entry) => ({ format_version: 1, ...entry })),
    );
    assert.deepEqual(
      entries.slice(2).map((entry) => [entry.act, entry.node, entry.outcome]),
      [['converge', 'box', 'done']],
    );

    // Opening again upgrades nothing more and changes nothing.
    const before = await snapshot(world.state);
    assert.equal((await world.berth('status')).code, 0);
    assert.deepEqual(await snapshot(world.state), before);
  });

  it('is upgraded by an act too, which then acts on the new layout', async () => {
    const act = await world.berth('assign', 'web', 'db');
    assert.equal(act.code, 0, act.stderr);
    const record = JSON.parse(await readFile(join(world.state, 'nodes/web/record.json'), 'utf8'));
    assert.deepEqual(record.assigned, ['cache', 'db']);
    assert.deepEqual(
      JSON.parse(await readFile(join(world.state, 'before-upgrade/state.json'), 'utf8')),
      OLD_STATE,
    );
  });

  it('an upgrade that died before its rename is started over: its staging directory is removed', async () => {
    const staging = join(world.state, '.nodes.0123456789ab.tmp');
    await mkdir(join(staging, 'box'), { recursive: true });
    await writeFile(join(staging, 'box', 'record.json'), '{"assigned": ["half');
    const status = await world.berth('status');
    assert.equal(status.code, 0, status.stderr);
    await assertUpgraded(world.state);
  });

  it('an upgrade that died after its rename, with the old files still in place, is finished', async () => {
    assert.equal((await world.berth('status')).code, 0);
    await assertUpgraded(world.state);
    // Put back as they were the moment after nodes/ took its name.
    for (const name of ['state.json', 'vault.json', 'previews.json'])
      await rename(join(world.state, 'before-upgrade', name), join(world.state, name));
    await rm(join(world.state, 'before-upgrade'), { recursive: true });
    const nodes = await snapshot(join(world.state, 'nodes'));

    const log = await world.berth('log', '--json');
    assert.equal(log.code, 0, log.stderr);
    await assertUpgraded(world.state);
    assert.deepEqual(
      await snapshot(join(world.state, 'nodes')),
      nodes,
      'nodes/ is not written again',
    );
    const act = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(act.code, 0, act.stderr);
  });
});

describe('the upgrade of an earlier layout whose names are JavaScript property names', () => {
  it('keeps node constructor and its module constructor, as state.json had them', async () => {
    const world = await makeWorld({ constructor: { start: 'true' } });
    try {
      await world.writeSettings({ nodes: { constructor: { root: world.root } } });
      const managed = { constructor: { since: SINCE, via: 'converge', started: true } };
      await writeFile(
        join(world.state, 'state.json'),
        JSON.stringify({
          version: 1,
          assignments: { constructor: ['constructor'] },
          managed: { constructor: managed },
          accounts: {},
        }),
      );
      const status = await world.berth('status', 'constructor', '--json');
      assert.equal(status.code, 0, status.stderr);
      const [node] = JSON.parse(status.stdout).nodes;
      assert.deepEqual(node.assigned, ['constructor']);
      assert.deepEqual(node.managed, managed);
    } finally {
      await world.cleanup();
    }
  });
});
