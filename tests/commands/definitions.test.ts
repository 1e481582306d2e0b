import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { actOnPreview, snapshot, stateFiles } from './support.ts';

const PG_CONF = '/etc/postgres/pg.conf';

/**
 * What an operator writes by hand is checked at every depth: a field berth does not
 * know is refused, never dropped, and every refusal names the file and the field.
 */
describe('a module definition', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  afterEach(() => world.cleanup());

  const refusals: [string, unknown, string][] = [
    [
      'an unknown field at the top, close to a known one',
      { ...POSTGRES, stat: 'true' },
      'unknown field stat; did you mean start?',
    ],
    [
      'an unknown field at the top, close to none',
      { ...POSTGRES, colour: 'blue' },
      'unknown field colour',
    ],
    [
      'an unknown field in a file entry',
      { ...POSTGRES, files: { [PG_CONF]: { content: 'x\n', mdoe: '0600' } } },
      `unknown field files.${PG_CONF}.mdoe; did you mean mode?`,
    ],
    [
      'an unknown field in a secret entry',
      { ...POSTGRES, secrets: { password: { path: '/etc/postgres/password', bites: 16 } } },
      'unknown field secrets.password.bites; did you mean bytes?',
    ],
    [
      'an unknown field in a data entry',
      { ...POSTGRES, data: [{ path: '/var/lib/postgresql', ownr: 'postgres' }] },
      'unknown field data.0.ownr; did you mean owner?',
    ],
    [
      'an owner that is no name',
      { ...POSTGRES, files: { [PG_CONF]: { content: 'x\n', owner: 'no body' } } },
      `files.${PG_CONF}.owner: an owner or group is a name on the machine (like "www-data") or a number`,
    ],
    [
      'a string where a list belongs',
      { ...POSTGRES, needs: 'postgres' },
      'needs: expected a list, got the string "postgres"',
    ],
    [
      'a list where an object belongs',
      { ...POSTGRES, files: [PG_CONF] },
      'files: expected an object, got a list',
    ],
    [
      'a file without content or source',
      { ...POSTGRES, files: { [PG_CONF]: { mode: '0640' } } },
      `files.${PG_CONF}: a file has either content or source (a template under the catalog directory), exactly one`,
    ],
    [
      'a mode that is not octal',
      { ...POSTGRES, files: { [PG_CONF]: { mode: '640x', content: 'x\n' } } },
      `files.${PG_CONF}.mode: a mode is octal, like "0640"`,
    ],
    [
      'a package that is no package name',
      { ...POSTGRES, packages: ['Postgres SQL'] },
      'packages.0: a package is a Debian package name, like "nginx" (a-z, 0-9, +, . and -)',
    ],
    [
      'an unknown field in a package',
      { ...POSTGRES, packages: [{ name: 'postgresql', versoin: '15+248' }] },
      'unknown field packages.0.versoin; did you mean version?',
    ],
    [
      'a version no package manager spells',
      { ...POSTGRES, packages: [{ name: 'postgresql', version: '15; rm -rf /' }] },
      'packages.0.version: a version is as the package manager spells it, like "1.22.1-9+deb12u1"',
    ],
    [
      'a package named twice',
      { ...POSTGRES, packages: ['postgresql', { name: 'postgresql', version: '15+248' }] },
      'packages: a package is named once in packages',
    ],
  ];
  for (const [what, definition, words] of refusals) {
    it(`${what} is refused by assign, naming the file and the field`, async () => {
      await world.writeModule('bad', definition);
      const file = join(world.state, 'modules', 'bad.json');
      const run = await world.berth('assign', 'box', 'bad');
      assert.deepEqual(run, {
        code: 1,
        stdout: 'box is to run bad\n',
        stderr: `bad does not resolve: ${file} is not valid: ${words}\n`,
      });
    });
  }

  it('with a mistyped field blocks a converge, which writes nothing on the machine', async () => {
    await world.berth('assign', 'box', 'postgres');
    await world.writeModule('postgres', {
      ...POSTGRES,
      files: { [PG_CONF]: { mdoe: '0600', content: 'password={{secret password}}\n' } },
    });
    const file = join(world.state, 'modules', 'postgres.json');
    const blocker = `postgres does not resolve: ${file} is not valid: unknown field files.${PG_CONF}.mdoe; did you mean mode?`;
    const before = await snapshot(world.root);

    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, 'a preview with blockers is still a preview');
    assert.ok(preview.stdout.includes(`\nblocked: ${blocker}\n`), preview.stdout);
    const run = await actOnPreview(world, preview);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, `the act is refused while a blocker stands: ${blocker}\n`);
    assert.deepEqual(await snapshot(world.root), before, 'nothing written on the machine');
  });
});

describe('berth.json', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  afterEach(() => world.cleanup());

  const refusals: [string, (root: string) => unknown, string][] = [
    [
      'an unknown field at the top',
      (root) => ({ nodes: { box: { root } }, catalogue: 'modules' }),
      'unknown field catalogue; did you mean catalog?',
    ],
    [
      'an unknown field in a node entry, close to a known one',
      (root) => ({ nodes: { box: { rot: root } } }),
      'unknown field nodes.box.rot; did you mean root?',
    ],
    [
      'an unknown field in a node entry, close to none',
      (root) => ({ nodes: { box: { root, colour: 'red' } } }),
      'unknown field nodes.box.colour',
    ],
    [
      'a port on a node reached through its root',
      (root) => ({ nodes: { box: { root, port: 22 } } }),
      'nodes.box: port and sudo go with ssh; a node with root is this machine',
    ],
    [
      'a node entry with both ways to reach it',
      (root) => ({ nodes: { box: { root, ssh: 'admin@box' } } }),
      'nodes.box: a node has root (a directory on this machine) or ssh (a destination), one of the two',
    ],
    [
      'a flip that is not a duration',
      (root) => ({ nodes: { box: { root } }, flip: '1 year' }),
      'flip: a duration, like "90s", "15m" or "1h"',
    ],
  ];
  for (const [what, settings, words] of refusals) {
    it(`${what} is refused by a node command (exit 1), naming the file and the field`, async () => {
      await world.writeSettings(settings(world.root));
      const before = { state: await stateFiles(world), box: await snapshot(world.root) };
      const run = await world.berth('adopt', 'box');
      assert.deepEqual(run, {
        code: 1,
        stdout: '',
        stderr: `${join(world.state, 'berth.json')} is not valid: ${words}\n`,
      });
      const after = { state: await stateFiles(world), box: await snapshot(world.root) };
      assert.deepEqual(after, before, 'nothing written, in the state or on the machine');
    });
  }
});
