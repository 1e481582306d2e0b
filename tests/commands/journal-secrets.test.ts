/**
 * The journal keeps an act's typed result, never a secret: a file berth rewrites may hold
 * one the vault does not keep (a database password an operator put there by hand, a value
 * replaced since), and a written file's diff would carry it. The hostile party is the
 * file on the node; the journal on disk and `berth log` must hold nothing of it.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const HAND_SECRET = 'hand-put-db-password-0451';
const APP = {
  description: 'an app whose configuration berth writes',
  files: { '/etc/app/app.conf': { content: 'user=app\n' } },
};

describe('the journal, beside a secret on the node that the vault does not keep', () => {
  let world: World;
  const root = () => join(world.dir, 'box');
  before(async () => {
    world = await makeWorld({ app: APP });
    await mkdir(join(root(), 'etc/app'), { recursive: true });
    await world.writeSettings({ nodes: { box: { root: root() } } });
    assert.equal((await world.berth('assign', 'box', 'app')).code, 0);
    const first = await world.berth('converge', 'box');
    const act = await world.berth('converge', 'box', '--yes', '--digest', digestOf(first.stdout));
    assert.equal(act.code, 0, act.stderr);
  });
  after(() => world?.cleanup());

  it('journals the rewrite of a file that held it, and keeps nothing of it', async () => {
    // An operator left the old database's password in it by hand: berth writes the file again.
    await writeFile(join(root(), 'etc/app/app.conf'), `user=app\ndb_password=${HAND_SECRET}\n`);
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await world.berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
    assert.equal(act.code, 0, act.stderr);
    assert.match(act.stdout, /wrote \/etc\/app\/app\.conf/);
    const journal = await readFile(join(world.state, 'nodes/box/journal.jsonl'), 'utf8');
    assert.match(journal, /"path":"\/etc\/app\/app\.conf"/, 'the write is journaled');
    assert.ok(!journal.includes(HAND_SECRET), 'the journal holds no line of the old file');
    const log = await world.berth('log', 'box', '--json');
    assert.equal(log.code, 0, log.stderr);
    assert.ok(!log.stdout.includes(HAND_SECRET));
  });
});
