import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chmod, cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { snapshot } from '../commands/support.ts';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import {
  ageDecrypt,
  ageEncrypt,
  ageUnavailable,
  berthIn,
  keygen,
  operator,
  secretsFoundIn,
} from './support.ts';

const SECRET_FILES = ['/etc/postgres/password', '/etc/gitea/db_password', '/etc/gitea/admin_token'];

interface Vault {
  sealed?: string;
  key: string;
  secrets: Record<string, { value: string; origin: string; at: string }>;
}

const readVault = async (world: World): Promise<Vault> =>
  JSON.parse(await readFile(join(world.state, 'nodes/box/vault.json'), 'utf8'));

/** Previews and acts: the converge an operator types. */
async function converge(berth: ReturnType<typeof berthIn>) {
  const preview = await berth('converge', 'box');
  assert.equal(preview.code, 0, preview.stderr);
  const digest = preview.stdout.trim().split('\n').at(-1)?.split(' ')[1] ?? '';
  return berth('converge', 'box', '--yes', '--digest', digest);
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = ageUnavailable();

describe('the sealed vault in a state directory, through the binary', () => {
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  let berth: ReturnType<typeof berthIn>;
  let firstRun: Awaited<ReturnType<typeof converge>>;

  before(async () => {
    if (skip) return;
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    me = await operator();
    berth = berthIn(world.state, me.env);
    await berth('assign', 'box', 'postgres');
    await berth('assign', 'box', 'gitea');
    const preview = await berth('converge', 'box');
    firstRun = preview;
    const digest = preview.stdout.trim().split('\n').at(-1)?.split(' ')[1] ?? '';
    const act = await berth('converge', 'box', '--yes', '--digest', digest);
    assert.equal(act.code, 0, act.stderr);
  });
  after(async () => {
    if (skip) return;
    await world?.cleanup();
    await rm(me.config, { recursive: true, force: true });
  });

  it('makes its identity once for a fresh state, 0600, saying where and its recipient', {
    skip,
  }, async () => {
    const info = await stat(me.identityFile);
    assert.equal((info.mode & 0o777).toString(8), '600');
    const text = await readFile(me.identityFile, 'utf8');
    const recipient = /# public key: (age1\w+)/.exec(text)?.[1];
    assert.ok(recipient);
    assert.equal(
      firstRun.stderr,
      `berth made its age identity in ${me.identityFile} (recipient ${recipient}); keep it safe: without it the secrets berth keeps cannot be restored\n`,
    );
    const again = await berth('converge', 'box');
    assert.equal(again.stderr, '', 'said once');
  });

  it('the reference age opens every value and the key with that identity; each is the value on the node', {
    skip,
  }, async () => {
    const vault = await readVault(world);
    assert.equal(vault.sealed, 'age');
    assert.equal(ageDecrypt(vault.key, me.identityFile)?.length, 32, 'the fingerprint key');
    const opened = Object.fromEntries(
      Object.entries(vault.secrets).map(([name, kept]) => [
        name,
        ageDecrypt(kept.value, me.identityFile)?.toString(),
      ]),
    );
    assert.deepEqual(opened, {
      'postgres/password': await readFile(join(world.root, SECRET_FILES[0] as string), 'utf8'),
      'gitea/db_password': await readFile(join(world.root, SECRET_FILES[1] as string), 'utf8'),
      'gitea/admin_token': await readFile(join(world.root, SECRET_FILES[2] as string), 'utf8'),
    });
  });

  it('holds no secret anywhere in the state directory: as is, base64 or hex', {
    skip,
  }, async () => {
    const secrets = await Promise.all(
      SECRET_FILES.map((path) => readFile(join(world.root, path), 'utf8')),
    );
    const vault = await readVault(world);
    const key = ageDecrypt(vault.key, me.identityFile)?.toString('latin1') ?? '';
    assert.deepEqual(await secretsFoundIn(world.state, [...secrets, key]), []);
  });

  it('opens a value the reference age sealed to its recipient, and restores it', {
    skip,
  }, async () => {
    const recipient = execRecipient(me.identityFile);
    const vault = await readVault(world);
    const kept = vault.secrets['postgres/password'];
    assert.ok(kept);
    kept.value = ageEncrypt('sealed-by-age-cli', [recipient]);
    await writeFile(join(world.state, 'nodes/box/vault.json'), JSON.stringify(vault), {
      mode: 0o600,
    });
    const shown = await berth('secret', 'box', 'postgres', 'password');
    assert.deepEqual([shown.code, shown.stdout, shown.stderr], [0, 'sealed-by-age-cli\n', '']);
    await rm(join(world.root, 'etc/postgres/password'));
    const act = await converge(berth);
    assert.equal(act.code, 0, act.stderr);
    assert.equal(
      await readFile(join(world.root, 'etc/postgres/password'), 'utf8'),
      'sealed-by-age-cli',
    );
    const journal = await readFile(join(world.state, 'nodes/box/journal.jsonl'), 'utf8');
    assert.match(journal, /"act":"secret".*"secret":"password"/);
    const log = await berth('log', 'box', '--json');
    assert.match(log.stdout, /"said":"root read the secret password of postgres on box"/);
    assert.doesNotMatch(log.stdout, /sealed-by-age-cli/);
    assert.doesNotMatch(
      journal,
      /sealed-by-age-cli/,
      'the journal names what was read, not its value',
    );
  });

  it('without an identity: refused in words naming where berth looked, nothing written, none made', {
    skip,
  }, async () => {
    const away = `${me.identityFile}.away`;
    await rename(me.identityFile, away);
    try {
      await rm(join(world.root, 'etc/gitea/admin_token'));
      const before = await snapshot(world.state);
      const looked = `it looked at $BERTH_IDENTITY (not set), $CREDENTIALS_DIRECTORY/berth-identity (not set), ${me.identityFile} (no such file)`;
      const preview = await berth('converge', 'box');
      assert.equal(preview.code, 1);
      assert.equal(
        preview.stderr,
        `berth needs its age identity to open the sealed fingerprint key of box, and found none: ${looked}\n`,
      );
      for (const args of [
        ['adopt', 'box'],
        ['secret', 'box', 'gitea', 'db_password'],
        ['rekey'],
        ['status', 'box', '--check'],
      ]) {
        const refused = await berth(...args);
        assert.equal(refused.code, 1, args.join(' '));
        assert.match(refused.stderr, /berth needs its age identity to open the sealed/);
        assert.ok(refused.stderr.includes(looked), refused.stderr);
      }
      // The files, less the journal and the node's newest survey, which record each
      // refused act and preview as what was seen; a directory's time changes with its lock.
      const records = (snap: Record<string, string>) =>
        Object.fromEntries(
          Object.entries(snap).filter(
            ([path, what]) =>
              what.startsWith('file') &&
              !path.endsWith('journal.jsonl') &&
              !path.endsWith('survey.json'),
          ),
        );
      assert.deepEqual(records(await snapshot(world.state)), records(before), 'nothing written');
      await assert.rejects(stat(me.identityFile), 'no identity made over kept values');
      // What needs no value works without one.
      for (const args of [['status'], ['status', 'box'], ['log'], ['assign', 'box', 'gitea']])
        assert.equal((await berth(...args)).code, 0, args.join(' '));
      const unassign = await berth('unassign', 'box', 'gitea');
      assert.equal(unassign.code, 0, unassign.stderr);
      assert.equal((await berth('assign', 'box', 'gitea')).code, 0);
    } finally {
      await rename(away, me.identityFile);
    }
  });

  it('without an identity, a preview that fingerprints nothing is made all the same', {
    skip,
  }, async () => {
    // A module of data alone: nothing of it is read or fingerprinted, so its preview opens
    // neither the fingerprint key nor a value. (An act opens every value of its node first.)
    await writeFile(
      join(world.state, 'modules/cache.json'),
      JSON.stringify({ description: 'a cache', data: ['/var/cache/thing'] }),
    );
    assert.equal((await berth('assign', 'box', 'cache')).code, 0);
    const away = `${me.identityFile}.away`;
    await rename(me.identityFile, away);
    try {
      const preview = await berth('converge', 'box', '--filter', 'cache');
      assert.equal(preview.stderr, '');
      assert.equal(preview.code, 0);
      assert.match(preview.stdout, /digest [0-9a-f]{64}\s*$/);
      await assert.rejects(stat(me.identityFile), 'no identity made over kept values');
    } finally {
      await rename(away, me.identityFile);
      assert.equal((await berth('unassign', 'box', 'cache')).code, 0);
      await rm(join(world.state, 'modules/cache.json'));
    }
  });

  it('with the wrong identity: refused, naming it and why', { skip }, async () => {
    const other = await keygen(me.config, 'other');
    const preview = await berthIn(world.state, { ...me.env, BERTH_IDENTITY: other.file })(
      'converge',
      'box',
    );
    assert.equal(preview.code, 1);
    assert.equal(
      preview.stderr,
      `the sealed fingerprint key of box cannot be opened with the identity in ${other.file}: it was sealed to other recipients\n`,
    );
  });

  it('a recipient removed, then rekeyed: the one removed opens nothing, the rest everything', {
    skip,
  }, async () => {
    const own = execRecipient(me.identityFile);
    const bob = await keygen(me.config, 'bob');
    const settings = JSON.parse(await readFile(join(world.state, 'berth.json'), 'utf8'));
    await world.writeSettings({ ...settings, recipients: [own, bob.recipient] });
    const rekeyed = await berth('rekey');
    assert.deepEqual(
      [rekeyed.code, rekeyed.stdout],
      [0, 'sealed 4 values of box again to the recipients of now\n'],
    );
    for (const kept of Object.values((await readVault(world)).secrets))
      assert.ok(ageDecrypt(kept.value, bob.file), 'bob opens what was sealed to him');

    await world.writeSettings({ ...settings, recipients: [own] });
    const removed = await berth('rekey');
    assert.equal(removed.code, 0, removed.stderr);
    const vault = await readVault(world);
    assert.equal(ageDecrypt(vault.key, bob.file), undefined);
    for (const kept of Object.values(vault.secrets)) {
      assert.equal(ageDecrypt(kept.value, bob.file), undefined, 'bob opens nothing');
      assert.ok(ageDecrypt(kept.value, me.identityFile), 'the rest open everything');
    }
    const journal = await readFile(join(world.state, 'nodes/box/journal.jsonl'), 'utf8');
    assert.equal(
      journal.match(/"act":"rekey","node":"box","target":"[^"]*","outcome":"done"/g)?.length,
      2,
      'each rekey an act, journaled',
    );
  });

  it('a recipient mistyped in berth.json: validate names it, and a rekey is refused, sealing nothing', {
    skip,
  }, async () => {
    const own = execRecipient(me.identityFile);
    // One character changed for another of bech32's: the shape holds, the checksum does not.
    const mistyped = `${own.slice(0, 20)}${own[20] === 'q' ? 'p' : 'q'}${own.slice(21)}`;
    const settings = JSON.parse(await readFile(join(world.state, 'berth.json'), 'utf8'));
    const vault = join(world.state, 'nodes/box/vault.json');
    const kept = await readFile(vault, 'utf8');
    await world.writeSettings({ ...settings, recipients: [own, mistyped] });
    try {
      const words =
        /recipients\.1: an age X25519 recipient whose checksum holds \(a character of this one is mistyped\)\n$/;
      const validated = await berth('validate');
      assert.equal(validated.code, 1);
      assert.match(validated.stdout, words);
      // berth.json's words, as any command gives them: not the stores' (exit 3).
      const rekeyed = await berth('rekey');
      assert.equal(rekeyed.code, 1);
      assert.match(rekeyed.stderr, /^\S+berth\.json is not valid: /);
      assert.match(rekeyed.stderr, words);
      assert.equal(await readFile(vault, 'utf8'), kept, 'nothing sealed again');
    } finally {
      await world.writeSettings(settings);
    }
  });

  it('a value rekey cannot open is named, kept as it was, and the rest are sealed again', {
    skip,
  }, async () => {
    const carol = await keygen(me.config, 'carol');
    const vault = await readVault(world);
    const carols = ageEncrypt('carol-only', [carol.recipient]);
    (vault.secrets['gitea/admin_token'] as { value: string }).value = carols;
    await writeFile(join(world.state, 'nodes/box/vault.json'), JSON.stringify(vault), {
      mode: 0o600,
    });
    const rekeyed = await berth('rekey', 'box');
    assert.equal(rekeyed.code, 1);
    assert.equal(rekeyed.stdout, 'sealed 3 values of box again to the recipients of now\n');
    assert.equal(
      rekeyed.stderr,
      "berth's identity cannot open admin_token of gitea on box; kept as sealed before: rekey again with an identity they were sealed to\n",
    );
    const after = await readVault(world);
    assert.equal(after.secrets['gitea/admin_token']?.value, carols, 'kept as it was');
    assert.equal(ageDecrypt(carols, carol.file)?.toString(), 'carol-only');
  });
});

describe('berth rekey on a node no longer in berth.json, through the binary', () => {
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  after(async () => {
    if (skip) return;
    await world?.cleanup();
    if (me) await rm(me.config, { recursive: true, force: true });
  });

  it('reseals its kept values too: a recipient removed opens nothing of it any more', {
    skip,
  }, async () => {
    world = await makeWorld({ postgres: POSTGRES });
    me = await operator();
    const own = await keygen(me.config, 'own');
    const bob = await keygen(me.config, 'bob');
    const env = { ...me.env, BERTH_IDENTITY: own.file };
    const berth = berthIn(world.state, env);
    const oldRoot = join(world.dir, 'old');
    await mkdir(oldRoot);
    const nodes = { box: { root: world.root }, old: { root: oldRoot } };
    await world.writeSettings({ nodes, recipients: [own.recipient, bob.recipient] });
    for (const node of ['box', 'old']) {
      assert.equal((await berth('assign', node, 'postgres')).code, 0);
      const preview = await berth('converge', node);
      const digest = preview.stdout.trim().split('\n').at(-1)?.split(' ')[1] ?? '';
      const act = await berth('converge', node, '--yes', '--digest', digest);
      assert.equal(act.code, 0, act.stderr);
    }
    const oldVault = () => readFile(join(world.state, 'nodes/old/vault.json'), 'utf8');
    const sealedOld = JSON.parse(await oldVault()) as Vault;
    const password = await readFile(join(oldRoot, 'etc/postgres/password'), 'utf8');
    assert.equal(
      ageDecrypt(sealedOld.secrets['postgres/password']?.value ?? '', bob.file)?.toString(),
      password,
    );

    // The node is taken out of the inventory, and bob out of the team.
    await world.writeSettings({ nodes: { box: nodes.box }, recipients: [own.recipient] });
    const rekeyed = await berth('rekey');
    assert.deepEqual([rekeyed.code, rekeyed.stderr], [0, '']);
    assert.equal(
      rekeyed.stdout,
      'box: sealed 2 values of box again to the recipients of now\nold: sealed 2 values of old again to the recipients of now\n',
    );
    const vault = JSON.parse(await oldVault()) as Vault;
    assert.equal(ageDecrypt(vault.key, bob.file), undefined, 'bob opens not the key');
    const kept = vault.secrets['postgres/password']?.value ?? '';
    assert.equal(ageDecrypt(kept, bob.file), undefined, 'bob opens not the value');
    assert.equal(ageDecrypt(kept, own.file)?.toString(), password, 'the rest open it');
    const journal = await readFile(join(world.state, 'nodes/old/journal.jsonl'), 'utf8');
    assert.match(journal, /"act":"rekey","node":"old","target":"[^"]*","outcome":"done"/);

    // Named, it is reached too; a node with no records, in berth.json or not, is not.
    const named = await berth('rekey', 'old');
    assert.deepEqual(
      [named.code, named.stdout],
      [0, 'sealed 2 values of old again to the recipients of now\n'],
    );
    const unknown = await berth('rekey', 'never');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /berth does not know node never/);
  });
});

describe('a kept value berth cannot open, through the binary', () => {
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  after(async () => {
    if (skip) return;
    await world?.cleanup();
    if (me) await rm(me.config, { recursive: true, force: true });
  });

  it('a preview that only restores it opens none; the act is refused naming it, writing nothing', {
    skip,
  }, async () => {
    world = await makeWorld({
      tokens: {
        description: 'two tokens, no file that carries them',
        data: [],
        secrets: { a: { path: '/etc/tokens/a' }, b: { path: '/etc/tokens/b' } },
      },
    });
    me = await operator();
    const own = await keygen(me.config, 'own');
    const carol = await keygen(me.config, 'carol');
    const berth = berthIn(world.state, { ...me.env, BERTH_IDENTITY: own.file });
    assert.equal((await berth('assign', 'box', 'tokens')).code, 0);
    assert.equal((await converge(berth)).code, 0);
    // b is sealed to carol alone now (a vault copied from another team, say), and both
    // files are gone from the node.
    const vault = await readVault(world);
    (vault.secrets['tokens/b'] as { value: string }).value = ageEncrypt('carol-only', [
      carol.recipient,
    ]);
    await writeFile(join(world.state, 'nodes/box/vault.json'), JSON.stringify(vault), {
      mode: 0o600,
    });
    for (const name of ['a', 'b']) await rm(join(world.root, 'etc/tokens', name));

    const preview = await berth('converge', 'box');
    assert.deepEqual([preview.code, preview.stderr], [0, '']);
    assert.match(preview.stdout, /restore a from the vault to \/etc\/tokens\/a/);
    assert.match(preview.stdout, /restore b from the vault to \/etc\/tokens\/b/);
    const digest = preview.stdout.trim().split('\n').at(-1)?.split(' ')[1] ?? '';
    const act = await berth('converge', 'box', '--yes', '--digest', digest);
    assert.deepEqual(
      [act.code, act.stderr],
      [
        1,
        `the sealed value of b of tokens on box cannot be opened with the identity in ${own.file}: it was sealed to other recipients\n`,
      ],
    );
    await assert.rejects(stat(join(world.root, 'etc/tokens/a')), 'a is not restored either');
  });
});

describe('a state directory of the earlier berth, through the binary', () => {
  // Made by berth at main's commit 23ddfff (dist/berth.mjs built there): a node "box"
  // that runs postgres and gitea, its three secrets minted, and an account adopted.
  const FIXTURE = join(import.meta.dirname, '../fixtures/earlier-state');
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  let earlier: Vault;

  before(async () => {
    if (skip) return;
    world = await makeWorld();
    me = await operator();
    await rm(world.state, { recursive: true });
    await cp(FIXTURE, world.state, { recursive: true });
    // The earlier berth wrote its vault 0600; git keeps the fixture as 0644.
    await chmod(join(world.state, 'nodes/box/vault.json'), 0o600);
    earlier = JSON.parse(await readFile(join(FIXTURE, 'nodes/box/vault.json'), 'utf8'));
    await world.writeSettings({ nodes: { box: { root: world.root } } });
  });
  after(async () => {
    if (skip) return;
    await world?.cleanup();
    await rm(me.config, { recursive: true, force: true });
  });

  it('is sealed when first opened, nothing lost, and holds no plain value after', {
    skip,
  }, async () => {
    assert.equal(earlier.sealed, undefined, 'the fixture is of the earlier kind');
    const plain = Object.fromEntries(
      Object.entries(earlier.secrets).map(([name, kept]) => [
        name,
        Buffer.from(kept.value, 'base64').toString(),
      ]),
    );
    const berth = berthIn(world.state, me.env);
    const status = await berth('status', 'box');
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stderr, /^berth made its age identity in /);

    const vault = await readVault(world);
    assert.equal(vault.sealed, 'age');
    assert.deepEqual(
      ageDecrypt(vault.key, me.identityFile),
      Buffer.from(earlier.key, 'base64'),
      'the same fingerprint key, so the account adopted before still compares',
    );
    for (const [name, value] of Object.entries(plain)) {
      assert.equal(
        ageDecrypt(vault.secrets[name]?.value ?? '', me.identityFile)?.toString(),
        value,
      );
      assert.equal(vault.secrets[name]?.origin, earlier.secrets[name]?.origin);
    }
    const shown = await berth('secret', 'box', 'gitea', 'db_password');
    assert.equal(shown.stdout, `${plain['gitea/db_password']}\n`);
    assert.deepEqual(
      await secretsFoundIn(world.state, [
        ...Object.values(plain),
        Buffer.from(earlier.key, 'base64').toString('latin1'),
      ]),
      [],
    );
    assert.equal((await stat(join(world.state, 'nodes/box/vault.json'))).mode & 0o777, 0o600);
  });
});

function execRecipient(identityFile: string): string {
  // The recipient line that age-keygen and berth both write as a comment.
  return /# public key: (age1\w+)/.exec(readFileSync(identityFile, 'utf8'))?.[1] ?? '';
}
