/**
 * A real `berth api`, as systemd would run it, whose identity is missing: the acts that
 * open a kept value are refused by the command (409) in words naming what berth needs and
 * where it looked; the stores are fine, so what needs no value is still done (200).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { snapshot } from '../commands/support.ts';
import { apiWorld, type ServedApiWorld } from '../helpers/api-world.ts';
import { digestOf, POSTGRES, type World } from '../helpers/world.ts';
import { ageUnavailable, berthIn, operator } from './support.ts';

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = ageUnavailable();

describe('berth api without its identity, over HTTP', () => {
  let served: ServedApiWorld;
  let world: World;
  let me: Awaited<ReturnType<typeof operator>>;
  let credentials: string;

  const ask = (route: string, body: Record<string, unknown>) =>
    served.ask(route, body, { as: 'deployer' });

  before(async () => {
    if (skip) return;
    me = await operator();
    credentials = join(me.config, 'credentials');
    served = await apiWorld({
      modules: { postgres: POSTGRES, extra: { description: 'holds no secret' } },
      env: { ...me.env, CREDENTIALS_DIRECTORY: credentials },
      async prepare(made) {
        world = made;
        // The operator's berth makes the identity and seals the values minted to it.
        const berth = berthIn(world.state, me.env);
        assert.equal((await berth('assign', 'box', 'postgres')).code, 0);
        const preview = await berth('converge', 'box');
        const act = await berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
        assert.equal(act.code, 0, act.stderr);
        // Then it is gone, and the api's credential directory holds none (LoadCredential= unset).
        await rename(me.identityFile, `${me.identityFile}.away`);
        await mkdir(credentials);
      },
    });
  });
  after(async () => {
    if (skip) return;
    await served?.close();
    if (me) await rm(me.config, { recursive: true, force: true });
  });

  it('refuses a converge with 409, naming what it needs and where it looked; writes nothing', {
    skip,
  }, async () => {
    await rm(join(world.root, 'etc/postgres/password'));
    // The records, less the journal and the node's newest survey, which record each
    // refused act and preview as what was seen: whole records, not a write half-way.
    const records = async () =>
      Object.fromEntries(
        Object.entries(await snapshot(world.state)).filter(
          ([path, what]) =>
            what.startsWith('file') &&
            !path.endsWith('journal.jsonl') &&
            !path.endsWith('survey.json'),
        ),
      );
    const before = await records();
    const looked = `it looked at $BERTH_IDENTITY (not set), ${credentials}/berth-identity (no such file), ${me.identityFile} (no such file)`;
    const refused = `berth needs its age identity to open the sealed fingerprint key of box, and found none: ${looked}`;
    for (const body of [{ node: 'box' }, { node: 'box', yes: true, digest: '0'.repeat(64) }]) {
      const answer = await ask('/converge', body);
      assert.equal(answer.status, 409, answer.text);
      assert.equal(answer.body?.refused, refused);
      assert.equal(answer.body?.said, '');
    }
    assert.deepEqual(await records(), before, 'nothing written');
    await assert.rejects(readFile(join(world.root, 'etc/postgres/password')), 'nothing restored');
    await assert.rejects(readFile(me.identityFile), 'no identity made over kept values');
    const journal = await readFile(join(world.state, 'nodes/box/journal.jsonl'), 'utf8');
    assert.match(
      journal,
      /"actor":"deployer","via":"api","act":"converge","node":"box","target":"box","outcome":"refused"/,
    );
  });

  it('still does what needs no value: an assign is 200', { skip }, async () => {
    const answer = await ask('/assign', { node: 'box', module: 'extra' });
    assert.equal(answer.status, 200, answer.text);
  });
});
