/**
 * `berth ca` through the binary: the state's CA made at its first need and never twice,
 * even by two berths at once (a state directory, and PostgreSQL), its certificate printed
 * to anyone (no identity needed once it exists), its key sealed as every value, and sealed
 * again by `berth rekey`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readCertificate } from '../../src/keys/certificate.ts';
import { readFoundKey } from '../../src/keys/key-pair.ts';
import { needs } from '../helpers/needs.ts';
import { postgresUnavailable, startPostgres } from '../helpers/postgres-server.ts';
import { digestOf, makeWorld, POSTGRES, type World, withWords } from '../helpers/world.ts';
import { opened } from '../vault/opened.ts';
import { ageDecrypt, ageUnavailable, berthIn, keygen, operator } from '../vault/support.ts';

const skip = ageUnavailable() || needs('openssl', 'openssl');

const caFile = (state: string) => join(state, 'ca.json');
const readCaFile = async (state: string) =>
  JSON.parse(await readFile(caFile(state), 'utf8')) as {
    certificate: string;
    sealed: string;
    at: string;
  };
const caEntries = async (state: string) =>
  (await readFile(join(state, 'journal.jsonl'), 'utf8').catch(() => ''))
    .split('\n')
    .filter((line) => line.includes('"act":"ca"'));

describe('berth ca, on a state directory', () => {
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  let berth: ReturnType<typeof berthIn>;
  before(async () => {
    if (skip) return;
    world = await makeWorld({ postgres: POSTGRES });
    me = await operator();
    berth = berthIn(world.state, me.env);
  });
  after(async () => {
    if (skip) return;
    await world?.cleanup();
    await rm(me.config, { recursive: true, force: true });
  });

  it('makes the CA at its first need and prints its certificate; then prints the same, making none', {
    skip,
  }, async () => {
    const first = await berth('ca');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      /berth made the state's CA: it signs the certificates of tls secrets\n$/,
    );
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], {
      input: first.stdout,
      encoding: 'utf8',
    });
    assert.match(text, /Subject: CN = berth CA [0-9a-f]{8}\n/);
    assert.match(text, /CA:TRUE, pathlen:0/);
    const second = await berth('ca');
    assert.deepEqual([second.code, second.stdout, second.stderr], [0, first.stdout, '']);
    const journaled = await caEntries(world.state);
    assert.equal(journaled.length, 1, 'made once, journaled once');
    // Its words, as berth log makes them from the entry.
    assert.match(
      String(withWords(journaled[0] ?? '').said),
      /^made the state's CA \(CN=berth CA [0-9a-f]{8}, until 20\d\d-/,
    );
    const json = await berth('ca', '--json');
    assert.deepEqual(JSON.parse(json.stdout), {
      format_version: 1,
      certificate: `${first.stdout.trimEnd()}\n`,
      at: (await readCaFile(world.state)).at,
      made: false,
    });
  });

  it("keeps the CA's key sealed, 0600: the identity opens it to the key of the certificate, and nothing else holds it", {
    skip,
  }, async () => {
    const info = await stat(caFile(world.state));
    assert.equal((info.mode & 0o777).toString(8), '600');
    const kept = await readCaFile(world.state);
    assert.match(kept.sealed, /^-----BEGIN AGE ENCRYPTED FILE-----\n/);
    assert.doesNotMatch(await readFile(caFile(world.state), 'utf8'), /PRIVATE KEY/);
    const key = (await opened(kept.sealed, me.identityFile))?.toString() ?? '';
    const found = await readFoundKey(key);
    assert.ok('key' in found, JSON.stringify(found));
    const certificate = readCertificate(kept.certificate);
    assert.ok(!('refused' in certificate));
    assert.equal(found.key.publicPem, certificate.publicPem);
  });

  it('prints the CA to one without an identity, and to one whose identity opens nothing', {
    skip,
  }, async () => {
    const printed = (await berth('ca')).stdout;
    const nobody = await runIn(world.state, { XDG_CONFIG_HOME: join(me.config, 'elsewhere') });
    assert.deepEqual([nobody.code, nobody.stdout, nobody.stderr], [0, printed, '']);
    const stranger = await keygen(me.config, 'stranger');
    const other = await runIn(world.state, { BERTH_IDENTITY: stranger.file });
    assert.deepEqual([other.code, other.stdout, other.stderr], [0, printed, '']);
  });

  it('berth rekey seals the CA again: a recipient added opens it, one removed no longer does', {
    skip,
  }, async () => {
    const own = execFileSync('age-keygen', ['-y', me.identityFile], { encoding: 'utf8' }).trim();
    const bob = await keygen(me.config, 'bob');
    const settings = JSON.parse(await readFile(join(world.state, 'berth.json'), 'utf8'));
    const before = await readCaFile(world.state);
    await world.writeSettings({ ...settings, recipients: [own, bob.recipient] });
    const rekeyed = await berth('rekey');
    assert.equal(rekeyed.code, 0, rekeyed.stderr);
    assert.match(rekeyed.stdout, /^sealed the state's CA again to the recipients of now\n/);
    const after = await readCaFile(world.state);
    assert.equal(after.certificate, before.certificate);
    assert.equal(
      ageDecrypt(after.sealed, bob.file)?.toString(),
      ageDecrypt(before.sealed, me.identityFile)?.toString(),
    );
    await world.writeSettings({ ...settings, recipients: [own] });
    assert.equal((await berth('rekey')).code, 0);
    assert.equal(
      ageDecrypt((await readCaFile(world.state)).sealed, bob.file),
      undefined,
      'bob opens nothing',
    );
    // Bob alone, rekeying: he cannot open it any more; it is named, kept, and the exit says so.
    await world.writeSettings({ ...settings, recipients: [own, bob.recipient] });
    const bobs = await runIn(world.state, { BERTH_IDENTITY: bob.file }, 'rekey');
    assert.equal(bobs.code, 1);
    assert.match(
      bobs.stderr,
      /^berth's identity cannot open the key of the state's CA; kept as sealed before/,
    );
    assert.ok(
      ageDecrypt((await readCaFile(world.state)).sealed, me.identityFile),
      'kept as it was',
    );
    await world.writeSettings(settings);
  });

  it('refuses a CA file others can read, in words, and prints nothing', { skip }, async () => {
    await chmod(caFile(world.state), 0o644);
    try {
      const refused = await berth('ca');
      assert.equal(refused.code, 3);
      assert.equal(refused.stdout, '');
      assert.equal(
        refused.stderr,
        `the stores cannot be opened: ${caFile(world.state)} can be read by others (mode 644); make it 0600 (chmod 600 ${caFile(world.state)})\n`,
      );
    } finally {
      await chmod(caFile(world.state), 0o600);
    }
  });
});

/** berth in `state` with the operator's environment replaced by `env`. */
function runIn(state: string, env: Record<string, string | undefined>, ...args: string[]) {
  return berthIn(state, {
    XDG_CONFIG_HOME: undefined,
    BERTH_IDENTITY: undefined,
    CREDENTIALS_DIRECTORY: undefined,
    ...env,
  })(...(args.length ? args : ['ca']));
}

describe('the CA of a state whose identity is gone', () => {
  it('is no fresh state: berth makes no new identity over the sealed CA, and says why', {
    skip,
  }, async () => {
    const world = await makeWorld({ postgres: POSTGRES });
    const me = await operator();
    try {
      const berth = berthIn(world.state, me.env);
      assert.equal((await berth('ca')).code, 0);
      await rm(me.identityFile);
      // A converge that would mint and seal postgres's password: with no identity and no
      // recipients, a new identity would seal it, and the CA's key would be lost for good.
      assert.equal((await berth('assign', 'box', 'postgres')).code, 0);
      const preview = await berth('converge', 'box');
      const act =
        preview.code === 0
          ? await berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout))
          : preview;
      assert.equal(act.code, 1, act.stdout);
      assert.match(
        `${act.stdout}${act.stderr}`,
        /the vault holds sealed values already, so berth makes no new identity over them/,
      );
      await assert.rejects(stat(me.identityFile), { code: 'ENOENT' });
    } finally {
      await world.cleanup();
      await rm(me.config, { recursive: true, force: true });
    }
  });
});

describe('two berths making the CA at once', () => {
  it('on a state directory: both print the one CA kept, journaled once', { skip }, async () => {
    for (let round = 0; round < 3; round++) {
      const world = await makeWorld();
      const me = await operator();
      try {
        // An identity and its recipient given, so the two race for the CA alone.
        const generated = await keygen(me.config, 'team');
        const berth = berthIn(world.state, { ...me.env, BERTH_IDENTITY: generated.file });
        await world.writeSettings({ nodes: {}, recipients: [generated.recipient] });
        const [a, b] = await Promise.all([berth('ca'), berth('ca')]);
        assert.deepEqual([a.code, b.code], [0, 0], `${a.stderr}${b.stderr}`);
        assert.equal(a.stdout, b.stdout, 'one CA');
        assert.equal(`${(await readCaFile(world.state)).certificate.trimEnd()}\n`, a.stdout);
        assert.equal((await caEntries(world.state)).length, 1);
        assert.equal([a.stderr, b.stderr].filter((said) => said.includes('made')).length, 1);
      } finally {
        await world.cleanup();
        await rm(me.config, { recursive: true, force: true });
      }
    }
  });

  it('on PostgreSQL: both print the one CA kept, journaled once', {
    skip: skip || postgresUnavailable(),
  }, async () => {
    const server = await startPostgres();
    const dir = await mkdtemp(join(tmpdir(), 'berth-ca-pg-'));
    const me = await operator();
    try {
      const generated = await keygen(me.config, 'team');
      const settings = { nodes: {}, recipients: [generated.recipient] };
      await writeFile(join(dir, 'berth.json'), JSON.stringify(settings));
      for (let round = 0; round < 3; round++) {
        const url = await server.createDatabase();
        const berth = berthIn(dir, { ...me.env, BERTH_STORE: url, BERTH_IDENTITY: generated.file });
        const [a, b] = await Promise.all([berth('ca'), berth('ca')]);
        assert.deepEqual([a.code, b.code], [0, 0], `${a.stderr}${b.stderr}`);
        assert.equal(a.stdout, b.stdout, 'one CA');
        assert.match(a.stdout, /^-----BEGIN CERTIFICATE-----\n/);
        const rows = await server.admin(
          'SELECT count(*)::int AS n FROM berth_journal WHERE line LIKE \'%"act":"ca"%\'',
          [],
          url,
        );
        assert.equal(rows.rows[0]?.n, 1);
      }
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
      await rm(me.config, { recursive: true, force: true });
    }
  });
});
