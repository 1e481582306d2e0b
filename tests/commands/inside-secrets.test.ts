import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { vaultValues } from './support.ts';

const CONF = '/etc/redis/redis.conf';
const TEMPLATE = 'bind 127.0.0.1\nrequirepass {{secret password}}\nport 6379\n';

/** redis as its package lays it out: the password lives inside redis.conf. */
const REDIS = {
  data: ['/var/lib/redis'],
  secrets: { password: { in: CONF, match: '^requirepass\\s+(\\S+)$' } },
  files: { [CONF]: { source: 'redis/redis.conf' } },
};

async function writeTemplate(world: World, text: string) {
  await mkdir(join(world.state, 'modules', 'redis'), { recursive: true });
  await writeFile(join(world.state, 'modules', 'redis', 'redis.conf'), text);
}

async function act(world: World, ...args: string[]) {
  const preview = await world.berth(...args);
  assert.equal(preview.code, 0, preview.stderr);
  const done = await world.berth(...args, '--yes', '--digest', digestOf(preview.stdout));
  assert.equal(done.code, 0, done.stderr);
  return { preview: preview.stdout, said: done.stdout };
}

describe('a secret inside a file, and a file from a template', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ redis: REDIS });
    await writeTemplate(world, TEMPLATE);
  });
  afterEach(() => world.cleanup());

  it('take reads the password out of the hand-made config, mints none, and converge leaves the file as it was', async () => {
    const handMade = 'bind 127.0.0.1\nrequirepass HandMadeSecret42\nport 6379\n';
    await world.onBox(CONF, handMade);
    await world.onBox('/var/lib/redis/dump.rdb', 'REDIS0011');
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const take = await act(world, 'take', 'box', 'redis');
    assert.match(take.preview, /secret password: found on box inside \/etc\/redis\/redis\.conf/);
    assert.doesNotMatch(take.preview, /minted/);
    assert.deepEqual(await vaultValues(world), { 'box/redis/password': 'HandMadeSecret42' });

    const converge = await world.berth('converge', 'box');
    assert.match(converge.stdout, /box is as assigned: nothing to do/);
    assert.equal(await readFile(join(world.root, CONF), 'utf8'), handMade);

    // A changed setting in the template is written with the password the vault read; the
    // file places a secret, so the admin's 0644 loses its bits for other users.
    await writeTemplate(world, TEMPLATE.replace('6379', '6380'));
    const change = await act(world, 'converge', 'box');
    assert.ok(
      change.preview.includes(
        [
          '  write /etc/redis/redis.conf (mode 0640): it differs from what berth writes',
          '    --- /etc/redis/redis.conf on box',
          '    +++ /etc/redis/redis.conf as berth writes it',
          '    (+1 −1 lines)',
          '    @@ -1,3 +1,3 @@',
          '     bind 127.0.0.1',
          '     requirepass [secret password]',
          '    -port 6379',
          '    +port 6380',
          '  no reload: the change is live at the next start',
        ].join('\n'),
      ),
      change.preview,
    );
    assert.doesNotMatch(change.preview, /HandMadeSecret42/);
    assert.equal(
      await readFile(join(world.root, CONF), 'utf8'),
      'bind 127.0.0.1\nrequirepass HandMadeSecret42\nport 6380\n',
    );
  });

  it('an install mints the password into the vault and places it in the file alone', async () => {
    assert.equal((await world.berth('assign', 'box', 'redis')).code, 0);
    const install = await act(world, 'converge', 'box');
    assert.match(
      install.preview,
      /mint password into the vault, to be placed in \/etc\/redis\/redis\.conf/,
    );
    const password = (await vaultValues(world))['box/redis/password'];
    assert.ok(password && password.length >= 40);
    assert.equal(
      await readFile(join(world.root, CONF), 'utf8'),
      TEMPLATE.replace('{{secret password}}', password),
    );
    // No file of its own was made for it.
    assert.deepEqual(await readdir(join(world.root, '/etc/redis')), ['redis.conf']);
  });

  it('the take preview lists the files that differ from what berth would write, with their diff and no secret', async () => {
    await world.onBox(CONF, 'bind 0.0.0.0\nrequirepass HandMadeSecret42\nport 6379\n');
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    const preview = await world.berth('take', 'box', 'redis');
    assert.equal(preview.code, 0, preview.stderr);
    assert.ok(
      preview.stdout.includes(
        [
          'file /etc/redis/redis.conf: differs from what berth writes; the next converge rewrites it',
          '    --- /etc/redis/redis.conf on box',
          '    +++ /etc/redis/redis.conf as berth writes it',
          '    (+1 −1 lines)',
          '    @@ -1,3 +1,3 @@',
          '    -bind 0.0.0.0',
          '    +bind 127.0.0.1',
          '     requirepass [secret password]',
          '     port 6379',
        ].join('\n'),
      ),
      preview.stdout,
    );
    assert.doesNotMatch(preview.stdout, /HandMadeSecret42/);
  });

  it('shows at most 40 lines of a diff, saying how many more there are', async () => {
    const long = (tag: string) =>
      Array.from({ length: 100 }, (_, index) => `line ${index} ${tag}`).join('\n');
    await world.writeModule('long', {
      files: { '/etc/long.conf': { content: `${long('new')}\n` } },
    });
    await world.onBox('/etc/long.conf', `${long('old')}\n`);
    assert.equal((await world.berth('adopt', 'box')).code, 0);
    await act(world, 'take', 'box', 'long');
    const preview = await world.berth('converge', 'box', '--filter', 'long');
    const diff = preview.stdout.split('\n').filter((line) => line.startsWith('    '));
    assert.equal(diff.length, 41, preview.stdout);
    assert.equal(diff[0], '    --- /etc/long.conf on box');
    assert.match(
      diff[40] as string,
      /^ {4}… 164 more lines of diff \(--full-diff shows them all\)$/,
    );

    // The whole diff on asking, and the same digest: the act need not ask too.
    const full = await world.berth('converge', 'box', '--filter', 'long', '--full-diff');
    const whole = full.stdout.split('\n').filter((line) => line.startsWith('    '));
    assert.equal(whole.length, 204, full.stdout);
    assert.equal(whole.at(-1), '    +line 99 new');
    assert.equal(full.stdout.split('\n').at(-2), preview.stdout.split('\n').at(-2));
  });

  const refusals: [string, unknown, string][] = [
    [
      'a secret in a file the module does not write',
      { ...REDIS, files: {} },
      'secrets.password is inside /etc/redis/redis.conf, so the module needs a file /etc/redis/redis.conf whose content places it with {{secret password}}',
    ],
    [
      'a secret in a file that does not place it',
      { ...REDIS, files: { [CONF]: { content: 'port 6379\n' } } },
      'secrets.password is inside /etc/redis/redis.conf, so the module needs a file',
    ],
    [
      'a match without a capture group',
      { ...REDIS, secrets: { password: { in: CONF, match: '^requirepass' } } },
      'match is a regular expression with exactly one capture group (the secret)',
    ],
    [
      'in without match',
      { ...REDIS, secrets: { password: { in: CONF } } },
      'a secret inside a file names both in (the file) and match (where in it)',
    ],
    [
      'both content and source',
      { ...REDIS, files: { [CONF]: { source: 'redis/redis.conf', content: 'x' } } },
      'a file has either content or source (a template under the catalog directory), exactly one',
    ],
    [
      'a source that climbs out of the catalog',
      { ...REDIS, files: { [CONF]: { source: '../berth.json' } } },
      'a source is a path under the catalog directory',
    ],
    [
      'a source that is not there',
      { ...REDIS, files: { [CONF]: { source: 'redis/none.conf' } } },
      `files.${CONF}.source redis/none.conf cannot be read`,
    ],
  ];
  for (const [what, definition, words] of refusals) {
    it(`refuses ${what}, in words`, async () => {
      await world.writeModule('bad', definition);
      const assign = await world.berth('assign', 'box', 'bad');
      assert.equal(assign.code, 1);
      assert.ok(assign.stderr.includes(words), `${words}\nnot in\n${assign.stderr}`);
    });
  }
});
