/**
 * A catalog `source` (and a definition) is read only from under the catalog directory, by
 * its real path. A hostile catalog change (a symbolic link leading to a file of the
 * controller's) makes the module a definition that does not resolve, in words naming the
 * module, the file and why: the file's content never reaches a node, nor berth's words.
 */
import assert from 'node:assert/strict';
import { link, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const MARKER = 'controller-private-marker-7f3a9c';

/** Every file's text under a directory. */
async function everything(dir: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'utf8');
  }
  return text;
}

describe('a catalog source by its real path', () => {
  let world: World;
  let outside: string;
  before(async () => {
    world = await makeWorld();
    // The controller's own files, beside the state directory: what a link would copy.
    outside = join(world.dir, 'controller');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'pgpass'), `db.lan:5432:*:berth:${MARKER}\n`);
    await mkdir(join(world.state, 'modules', 'app'), { recursive: true });
  });
  after(() => world.cleanup());

  const defineApp = (source: string) =>
    world.writeModule('app', {
      description: 'an app',
      files: { '/etc/app.ini': { source } },
      start: 'true',
    });

  /** A converge preview and the act on its digest, on the rooted node box. */
  const preview = async () => {
    const shown = await world.berth('converge', 'box');
    const act = await world.berth('converge', 'box', '--yes', '--digest', digestOf(shown.stdout));
    return { shown, act };
  };

  it('refuses a symbolic link in the catalog that leads to a file outside it', async () => {
    await symlink(join(outside, 'pgpass'), join(world.state, 'modules', 'app', 'app.ini'));
    await defineApp('app/app.ini');
    assert.equal((await world.berth('assign', 'box', 'app')).code, 1);
    const { shown, act } = await preview();
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /blocked: app does not resolve: .*modules\/app\.json is not valid: files\.\/etc\/app\.ini\.source app\/app\.ini cannot be read: its real path is outside the catalog directory .* \(a symbolic link leads out\)/,
    );
    assert.equal(act.code, 1);
    for (const said of [shown.stdout, shown.stderr, act.stdout, act.stderr])
      assert.doesNotMatch(said, new RegExp(MARKER));
    assert.doesNotMatch(await everything(world.root), new RegExp(MARKER));
    assert.doesNotMatch(await everything(join(world.state, 'nodes')), new RegExp(MARKER));
  });

  it('refuses a template under a linked directory that leads out', async () => {
    await symlink(outside, join(world.state, 'modules', 'app', 'shared'));
    await defineApp('app/shared/pgpass');
    const { shown, act } = await preview();
    assert.match(shown.stdout, /app\/shared\/pgpass cannot be read: its real path is outside/);
    assert.equal(act.code, 1);
    assert.doesNotMatch(await everything(world.root), new RegExp(MARKER));
  });

  it('refuses a hard link, whose other names may stand anywhere', async () => {
    await link(join(outside, 'pgpass'), join(world.state, 'modules', 'app', 'hard.ini'));
    await defineApp('app/hard.ini');
    const { shown, act } = await preview();
    assert.match(
      shown.stdout,
      /app\/hard\.ini cannot be read: it is a hard link \(the file has 2 names\)/,
    );
    assert.equal(act.code, 1);
    assert.doesNotMatch(await everything(world.root), new RegExp(MARKER));
  });

  it('refuses .. in a source, in words', async () => {
    await defineApp('../controller/pgpass');
    const { shown } = await preview();
    assert.match(
      shown.stdout,
      /app does not resolve: .*a source is a path under the catalog directory/,
    );
    assert.doesNotMatch(shown.stdout, new RegExp(MARKER));
  });

  it('refuses a definition that is a link leading out, and quotes nothing of what it leads to', async () => {
    await symlink(join(outside, 'pgpass'), join(world.state, 'modules', 'evil.json'));
    const assign = await world.berth('assign', 'box', 'evil');
    assert.equal(assign.code, 1);
    assert.match(
      assign.stderr,
      /evil does not resolve: .*modules\/evil\.json cannot be read: its real path is outside the catalog directory/,
    );
    // Not even the few characters a JSON parser quotes of what it could not parse.
    assert.doesNotMatch(assign.stdout + assign.stderr, /db\.lan/);
    assert.equal((await world.berth('unassign', 'box', 'evil')).code, 0);
  });

  it('follows a link that stays inside the catalog', async () => {
    await writeFile(join(world.state, 'modules', 'app', 'base.ini'), 'port = 80\n');
    await symlink('base.ini', join(world.state, 'modules', 'app', 'current.ini'));
    await defineApp('app/current.ini');
    const { shown, act } = await preview();
    assert.doesNotMatch(shown.stdout, /blocked/);
    assert.equal(act.code, 0, act.stdout + act.stderr);
    assert.equal(await readFile(join(world.root, 'etc', 'app.ini'), 'utf8'), 'port = 80\n');
  });
});
