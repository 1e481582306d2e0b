import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCHEMA_VERSION } from '../../src/stores/postgres-schema.ts';
import {
  binDir,
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { ageDecrypt, ageUnavailable, berthIn, operator, spellings } from './support.ts';

const skip = ageUnavailable() ?? postgresUnavailable();

/** The whole database as `pg_dump` writes it: what a backup or a read-only role can read. */
function dump(url: string): string {
  return execFileSync(join(binDir() ?? '', 'pg_dump'), [url], { encoding: 'latin1' });
}

/** Each secret of `secrets` the text holds in a spelling of it (or as bytea's hex). */
function found(text: string, secrets: string[]): string[] {
  return secrets.flatMap((secret) => spellings(secret).filter((spelled) => text.includes(spelled)));
}

async function converge(berth: ReturnType<typeof berthIn>) {
  const preview = await berth('converge', 'box');
  assert.equal(preview.code, 0, preview.stderr);
  const digest = preview.stdout.trim().split('\n').at(-1)?.split(' ')[1] ?? '';
  const act = await berth('converge', 'box', '--yes', '--digest', digest);
  assert.equal(act.code, 0, act.stderr);
}

describe('the sealed vault in PostgreSQL, through the binary', () => {
  let server: PostgresServer;
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;

  before(async () => {
    if (skip) return;
    server = await startPostgres();
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    me = await operator();
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
    await world?.cleanup();
    await rm(me.config, { recursive: true, force: true });
  });

  it('seals every value and key it keeps: age opens them, and a pg_dump holds no secret', {
    skip,
  }, async () => {
    const berth = berthIn(world.state, { ...me.env, BERTH_STORE: server.url });
    await berth('assign', 'box', 'postgres');
    await berth('assign', 'box', 'gitea');
    await converge(berth);
    // The node's fingerprint key is made when something is first fingerprinted: here by
    // the preview that finds the files the act wrote.
    await berth('converge', 'box');
    const secrets = await Promise.all(
      ['etc/postgres/password', 'etc/gitea/db_password', 'etc/gitea/admin_token'].map((path) =>
        readFile(join(world.root, path), 'utf8'),
      ),
    );
    const rows = await server.admin(
      "SELECT convert_from(value, 'UTF8') AS sealed FROM berth_secrets ORDER BY secret",
      [],
      server.url,
    );
    const opened = rows.rows.map((row) => ageDecrypt(row.sealed, me.identityFile)?.toString());
    assert.deepEqual(opened.sort(), [...secrets].sort());
    const key = await server.admin(
      "SELECT convert_from(fingerprint_key, 'UTF8') AS sealed FROM berth_nodes WHERE node = 'box'",
      [],
      server.url,
    );
    const fingerprintKey = ageDecrypt(key.rows[0]?.sealed, me.identityFile);
    assert.equal(fingerprintKey?.length, 32);
    const text = dump(server.url);
    assert.match(
      text,
      /BEGIN AGE ENCRYPTED FILE|2d2d2d2d2d424547494e20414745/,
      'the dump was read',
    );
    assert.deepEqual(found(text, [...secrets, fingerprintKey?.toString('latin1') ?? '']), []);
    const shown = await berth('secret', 'box', 'gitea', 'db_password');
    assert.equal(shown.stdout, `${secrets[1]}\n`);
  });

  it('copy-state carries sealed values as they are', { skip }, async () => {
    const files = await makeWorld({ postgres: POSTGRES });
    try {
      const berth = berthIn(files.state, me.env);
      await berth('assign', 'box', 'postgres');
      await converge(berth);
      const vault = JSON.parse(await readFile(join(files.state, 'nodes/box/vault.json'), 'utf8'));
      const to = await server.createDatabase();
      const copied = await berth('copy-state', '--to', to);
      assert.equal(copied.code, 0, copied.stderr);
      const rows = await server.admin(
        "SELECT convert_from(value, 'UTF8') AS sealed FROM berth_secrets",
        [],
        to,
      );
      assert.deepEqual(
        rows.rows.map((row) => row.sealed),
        [vault.secrets['postgres/password'].value],
      );
      const shown = await berthIn(files.state, { ...me.env, BERTH_STORE: to })(
        'secret',
        'box',
        'postgres',
        'password',
      );
      assert.equal(
        shown.stdout,
        `${await readFile(join(files.root, 'etc/postgres/password'), 'utf8')}\n`,
      );
    } finally {
      await files.cleanup();
    }
  });
});

describe('a PostgreSQL store of the earlier berth, through the binary', () => {
  // A pg_dump of a store that berth at main's commit 23ddfff (its dist/berth.mjs) made:
  // node "box" runs postgres and gitea, three secrets minted, an account adopted.
  const FIXTURE = join(import.meta.dirname, '../fixtures/earlier-postgres-store.sql');
  let server: PostgresServer;
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;

  before(async () => {
    if (skip) return;
    server = await startPostgres();
    world = await makeWorld();
    me = await operator();
    execFileSync(
      join(binDir() ?? '', 'psql'),
      ['-q', '-v', 'ON_ERROR_STOP=1', '-f', FIXTURE, server.url],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  });
  after(async () => {
    if (skip) return;
    await server?.stop();
    await world?.cleanup();
    await rm(me.config, { recursive: true, force: true });
  });

  it('is sealed by a migration on first open, nothing lost, no value left in plain', {
    skip,
  }, async () => {
    const plain = await server.admin(
      "SELECT module || '/' || secret AS name, convert_from(value, 'UTF8') AS value FROM berth_secrets ORDER BY 1",
      [],
      server.url,
    );
    const key = await server.admin(
      "SELECT fingerprint_key FROM berth_nodes WHERE node = 'box'",
      [],
      server.url,
    );
    const earlierKey: Buffer = key.rows[0]?.fingerprint_key;
    assert.equal(plain.rows.length, 3);
    assert.equal(earlierKey.length, 32);

    const berth = berthIn(world.state, { ...me.env, BERTH_STORE: server.url });
    const shown = await berth('secret', 'box', 'gitea', 'db_password');
    assert.equal(shown.code, 0, shown.stderr);
    const earlier: Record<string, string> = Object.fromEntries(
      plain.rows.map((row) => [row.name, row.value]),
    );
    assert.equal(shown.stdout, `${earlier['gitea/db_password']}\n`);

    const version = await server.admin(
      'SELECT max(version) AS v FROM berth_schema',
      [],
      server.url,
    );
    assert.equal(version.rows[0]?.v, SCHEMA_VERSION);
    const sealed = await server.admin(
      "SELECT module || '/' || secret AS name, convert_from(value, 'UTF8') AS sealed FROM berth_secrets ORDER BY 1",
      [],
      server.url,
    );
    for (const row of sealed.rows)
      assert.equal(ageDecrypt(row.sealed, me.identityFile)?.toString(), earlier[row.name]);
    const sealedKey = await server.admin(
      "SELECT convert_from(fingerprint_key, 'UTF8') AS sealed FROM berth_nodes WHERE node = 'box'",
      [],
      server.url,
    );
    assert.deepEqual(ageDecrypt(sealedKey.rows[0]?.sealed, me.identityFile), earlierKey);
    assert.deepEqual(
      found(dump(server.url), [...Object.values(earlier), earlierKey.toString('latin1')]),
      [],
    );
  });
});
