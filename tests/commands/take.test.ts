import assert from 'node:assert/strict';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { appOver, post } from '../helpers/api.ts';
import { digestOf, GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import {
  convergeBox,
  modeOf,
  previewDigest,
  snapshot,
  stateFiles,
  vaultPath,
  vaultValues,
} from './support.ts';

/** A gitea installed by hand: its data and its database password, no admin token. */
async function handInstalledGitea(world: World) {
  await world.onBox('/var/lib/gitea/repositories/a.git', 'objects');
  await world.onBox('/etc/gitea/db_password', 'hunter2\n');
}

/** Lets berth mint the admin token a hand-installed gitea lacks: for the preview and the act alike. */
const MINT_TOKEN = ['--mint', 'admin_token'] as const;

/** The preview of gitea's take, with the options its act will have. */
function previewTake(world: World) {
  return previewDigest(world, 'take', 'box', 'gitea', ...MINT_TOKEN);
}

/** The act on a preview of gitea's take, letting berth mint the admin token it lacks. */
function takeGitea(world: World, digest: string) {
  return world.berth('take', 'box', 'gitea', '--yes', '--digest', digest, ...MINT_TOKEN);
}

describe('berth take', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  afterEach(() => world.cleanup());

  it('refuses a node without an account', async () => {
    const run = await world.berth('take', 'box', 'gitea');
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr: 'no account of box yet; adopt it first\n',
    });
  });

  it('refuses a module that is not in the catalog', async () => {
    await world.berth('adopt', 'box');
    const run = await world.berth('take', 'box', 'redis');
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^redis does not resolve: it is not in the catalog/);
  });

  it('previews the data found and every secret with its origin, ending with the digest', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const before = await snapshot(world.root);
    const run = await world.berth('take', 'box', 'gitea');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(
      lines[0] ?? '',
      /^take gitea on box, from the account taken \d+s ago \(the flip allows 15m\)$/,
    );
    assert.deepEqual(lines.slice(1, -1), [
      'data /var/lib/gitea: found',
      'secret db_password: found on box at /etc/gitea/db_password',
      'secret admin_token: to be minted by berth, at /etc/gitea/admin_token',
      'file /etc/gitea/app.ini: missing on box; the next converge writes it',
      "the act would be refused: admin_token is to be minted, but gitea's data was found on box: berth will not mint it unless named with --mint admin_token (a command-line option)",
    ]);
    assert.match(lines.at(-1) ?? '', /^digest [0-9a-f]{64}$/);
    assert.doesNotMatch(run.stdout, /hunter2/);
    assert.deepEqual(await snapshot(world.root), before, 'a preview changes nothing');
    assert.equal(
      (await world.journal()).filter((entry) => entry.act === 'take').length,
      0,
      'previews are not journaled',
    );
  });

  it('refuses to mint over found data without --mint, and keeps nothing', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const digest = await previewDigest(world, 'take', 'box', 'gitea');
    const run = await world.berth('take', 'box', 'gitea', '--yes', '--digest', digest);
    assert.deepEqual(run, {
      code: 1,
      stdout: '',
      stderr:
        "admin_token is to be minted, but gitea's data was found on box: berth will not mint it unless named with --mint admin_token (a command-line option)\n",
    });
    assert.deepEqual((await world.readState()).managed, {});
  });

  it('refuses --mint for a secret that was found, or that the module does not have', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    // The preview with the same options already says what the act will refuse.
    const act = async (...mint: string[]) => {
      const preview = await world.berth('take', 'box', 'gitea', ...mint);
      const run = await world.berth(
        'take',
        'box',
        'gitea',
        '--yes',
        '--digest',
        digestOf(preview.stdout),
        ...mint,
      );
      return { preview: preview.stdout, refused: run.stderr };
    };
    const found = await act('--mint', 'admin_token', '--mint', 'db_password');
    const words =
      '--mint names db_password, which was found on box; berth mints only what is missing';
    assert.equal(found.refused, `${words}\n`);
    assert.ok(found.preview.includes(`\nthe act would be refused: ${words}\n`), found.preview);
    const unknown = await act('--mint', 'root_key');
    assert.equal(unknown.refused, '--mint names root_key, which is not a secret of gitea\n');
  });

  it('previews what the act with the same --mint does: no refusal for a secret it names', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const without = await world.berth('take', 'box', 'gitea');
    assert.match(without.stdout, /the act would be refused: admin_token is to be minted/);
    const named = await world.berth('take', 'box', 'gitea', ...MINT_TOKEN);
    assert.equal(named.code, 0, named.stderr);
    assert.ok(!named.stdout.includes('the act would be refused'), named.stdout);
    assert.match(
      named.stdout,
      /\nsecret admin_token: to be minted by berth, at \/etc\/gitea\/admin_token\n/,
    );
    assert.notEqual(digestOf(named.stdout), digestOf(without.stdout));
  });

  it('takes with --mint: found secrets into the vault, minted ones written 0600, never printed', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const before = await readFile(join(world.root, 'etc/gitea/db_password'), 'utf8');
    const digest = await previewTake(world);
    const run = await takeGitea(world, digest);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      [
        'secret db_password: read into the vault from /etc/gitea/db_password',
        'secret admin_token: minted by berth and written to /etc/gitea/admin_token',
        'berth manages gitea on box now, and box is to run it',
        'gitea does not resolve: it needs postgres, which box is not assigned: converge box is blocked until it does',
        '',
      ].join('\n'),
    );

    const minted = await readFile(join(world.root, 'etc/gitea/admin_token'), 'utf8');
    assert.match(minted, /^[A-Za-z0-9_-]{43}$/, '32 random bytes as base64url');
    assert.equal(await modeOf(join(world.root, 'etc/gitea/admin_token')), '600');
    assert.equal(
      await readFile(join(world.root, 'etc/gitea/db_password'), 'utf8'),
      before,
      'a found secret stays as it was',
    );

    assert.equal(await modeOf(vaultPath(world)), '600');
    assert.deepEqual(await vaultValues(world), {
      'box/gitea/db_password': 'hunter2\n',
      'box/gitea/admin_token': minted,
    });
    const vault = JSON.parse(await readFile(vaultPath(world), 'utf8'));
    assert.equal(
      vault.secrets['gitea/db_password'].origin,
      'found on box at /etc/gitea/db_password',
    );
    assert.equal(vault.secrets['gitea/admin_token'].origin, 'minted by berth');

    const log = await world.berth('log', '--json');
    for (const text of [run.stdout, run.stderr, log.stdout]) {
      assert.ok(!text.includes(minted) && !text.includes('hunter2'));
    }
    for (const [name, text] of Object.entries(await stateFiles(world))) {
      if (name.endsWith('vault.json')) continue;
      assert.ok(!text.includes(minted) && !text.includes('hunter2'), name);
    }

    const state = await world.readState();
    assert.deepEqual(state.assignments, { box: ['gitea'] });
    const managed = (state.managed as Record<string, Record<string, Record<string, unknown>>>).box;
    assert.equal(managed?.gitea?.via, 'take');
    assert.equal(managed?.gitea?.started, true);
    const last = (await world.journal()).at(-1);
    assert.equal(last?.act, 'take');
    assert.equal(last?.outcome, 'done');
  });

  it('refuses a module berth already manages', async () => {
    await world.berth('adopt', 'box');
    assert.equal((await world.berth('take', 'box', 'postgres', '--yes')).code, 0);
    const run = await world.berth('take', 'box', 'postgres');
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'berth already manages postgres on box\n');
  });

  it('takes a module the machine holds nothing for with --yes alone, as not yet started', async () => {
    await world.berth('adopt', 'box');
    const preview = await world.berth('take', 'box', 'postgres');
    assert.match(
      preview.stdout,
      /\nbox holds nothing for postgres: nothing to compare, so yes alone is enough\n/,
    );
    const run = await world.berth('take', 'box', 'postgres', '--yes');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout,
      'secret password: minted by berth and written to /etc/postgres/password\n' +
        'berth manages postgres on box now, not yet started, and box is to run it: converge box to start it\n',
    );
    assert.equal(await modeOf(join(world.root, 'etc/postgres/password')), '600');

    const plan = await world.berth('converge', 'box');
    assert.match(plan.stdout, /\nupdate postgres:\n.*\n {2}run start: /s);
    const digest = digestOf(plan.stdout);
    const done = await world.berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /ran start of postgres/);
  });

  it('stops at a secret it cannot write: says what was done, and manages nothing yet', async () => {
    await world.writeModule('pair', {
      description: 'two secrets, the second where a file stands in its way',
      secrets: {
        first: { path: '/etc/pair/first' },
        second: { path: '/etc/pair/in-the-way/second' },
      },
    });
    await world.berth('adopt', 'box');
    await world.onBox('/etc/pair/in-the-way', 'a file where a directory should be\n');
    const run = await world.berth('take', 'box', 'pair', '--yes');
    assert.equal(run.code, 1);
    assert.equal(run.stdout, 'secret first: minted by berth and written to /etc/pair/first\n');
    assert.match(
      run.stderr,
      /^the take of pair on box stopped: write \/etc\/pair\/in-the-way\/second failed: .+\n$/,
    );
    assert.equal(
      await readFile(join(world.root, 'etc/pair/first'), 'utf8'),
      (await vaultValues(world))['box/pair/first'],
    );
    assert.equal(((await world.readState()).managed as Record<string, unknown>).box, undefined);
  });

  it('asks for the digest when the machine holds something', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const run = await world.berth('take', 'box', 'gitea', '--yes', '--mint', 'admin_token');
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'a take acts on a preview: preview it (berth take box gitea), then act with yes and its digest\n',
    );
    const notDigest = await world.berth('take', 'box', 'gitea', '--yes', '--digest', 'abc');
    assert.equal(
      notDigest.stderr,
      '"abc" is not a digest: a digest is the 64 lower-case hex characters on the last line of a preview\n',
    );
  });

  it('refuses a stale digest, saying what changed since', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const digest = await previewDigest(world, 'take', 'box', 'gitea');
    await world.onBox('/etc/gitea/db_password', 'hunter3\n');
    await world.onBox('/etc/gitea/admin_token', 'by-hand\n');
    await world.berth('adopt', 'box');
    const run = await world.berth('take', 'box', 'gitea', '--yes', '--digest', digest);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `the preview changed since digest ${digest.slice(0, 12)}…: secret admin_token of gitea changed on box; secret db_password of gitea changed on box; preview again\n`,
    );
    assert.deepEqual((await world.readState()).managed, {});
  });

  it('refuses the digest of another preview, naming both', async () => {
    await world.berth('adopt', 'box');
    const digest = await previewDigest(world, 'converge', 'box');
    const run = await world.berth('take', 'box', 'postgres', '--yes', '--digest', digest);
    assert.equal(
      run.stderr,
      `the preview changed since digest ${digest.slice(0, 12)}…: that digest is of a preview of berth converge box, not of berth take box postgres; preview again\n`,
    );
  });

  it('refuses when a found secret changed after the account was taken', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const digest = await previewTake(world);
    await world.onBox('/etc/gitea/db_password', 'changed-by-hand\n');
    const run = await takeGitea(world, digest);
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'secret db_password of gitea changed on box since the account was taken; adopt box again\n',
    );
    assert.deepEqual((await world.readState()).managed, {});
  });

  it('refuses, saying so, when a found secret cannot be read at the act', async () => {
    await handInstalledGitea(world);
    await world.berth('adopt', 'box');
    const digest = await previewTake(world);
    // What was a file is now a directory: it exists, but cannot be read as a secret.
    await rm(join(world.root, 'etc/gitea/db_password'));
    await mkdir(join(world.root, 'etc/gitea/db_password'));
    const run = await takeGitea(world, digest);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^secret db_password of gitea at \/etc\/gitea\/db_password on box cannot be read: it is a directory, not a file\n$/,
    );
    assert.deepEqual((await world.readState()).managed, {});
  });

  it('refuses an account older than the flip allows, in the preview and at the act', async () => {
    await world.writeSettings({ nodes: { box: { root: world.root } }, flip: '1s' });
    await world.onBox('/var/lib/postgresql/base', 'data');
    await world.onBox('/etc/postgres/password', 'hunter2\n');
    // The app as berth api builds it, on a clock of the test's: the account ages by it.
    let now = Date.parse('2026-11-21T08:00:00.000Z');
    const api = appOver(world.state, { now: () => new Date(now) });
    const take = async (more: Record<string, unknown> = {}) =>
      post(api, '/take', { node: 'box', module: 'postgres', ...more });
    assert.equal((await post(api, '/adopt', { node: 'box' })).status, 200);

    now += 1_000;
    const atTheFlip = await take();
    assert.equal(atTheFlip.status, 200, JSON.stringify(atTheFlip.body));
    assert.doesNotMatch(String(atTheFlip.body?.said), /the act would be refused/);

    // Past the flip by less than a second, the age still reads as past it: never "1s old".
    now += 1;
    const stale = 'the account of box is 2s old; the flip allows 1s; adopt box again';
    const preview = await take();
    const said = String(preview.body?.said);
    assert.match(said, new RegExp(`\\nthe act would be refused: ${stale}\\n`));
    const act = await take({ yes: true, digest: digestOf(said) });
    assert.equal(act.status, 409);
    assert.equal(act.body?.refused, stale);
    assert.deepEqual((await world.readState()).managed, {});

    // Adopted again, the account is young: the take is done.
    assert.equal((await post(api, '/adopt', { node: 'box' })).status, 200);
    const again = await take({ yes: true, digest: digestOf(String((await take()).body?.said)) });
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });

  it('journals refused acts with the OS user, and not previews', async () => {
    await world.berth('take', 'box', 'gitea');
    await world.berth('take', 'box', 'gitea', '--yes');
    const entries = await world.journal();
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.outcome, 'refused');
    assert.equal(entries[0]?.error, 'no account of box yet; adopt it first');
  });

  it('restores a secret the vault keeps but the machine lost, rather than minting over it', async () => {
    // postgres was installed by berth, released, and its password file wiped by hand,
    // while the running service still uses that password: the vault holds the only copy.
    await world.berth('assign', 'box', 'postgres');
    await convergeBox(world);
    const password = await readFile(join(world.root, 'etc/postgres/password'), 'utf8');
    await world.onBox('/var/lib/postgresql/base', 'rows');
    await world.berth('unassign', 'box', 'postgres');
    await convergeBox(world);
    await rm(join(world.root, 'etc/postgres/password'));
    await world.berth('adopt', 'box');

    const preview = await world.berth('take', 'box', 'postgres');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /\nsecret password: kept in the vault: restored to \/etc\/postgres\/password\n/,
    );
    assert.ok(!preview.stdout.includes('the act would be refused'), preview.stdout);
    const run = await world.berth(
      'take',
      'box',
      'postgres',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^secret password: restored from the vault to \/etc\/postgres\/password\n/,
    );
    assert.equal(await readFile(join(world.root, 'etc/postgres/password'), 'utf8'), password);
    assert.equal(await modeOf(join(world.root, 'etc/postgres/password')), '600');
  });
});
