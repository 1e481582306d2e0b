/**
 * A take preview of Debian's redis.conf (2,277 lines, from the redis-server package
 * .ci/run installs) where the admin set maxmemory, against the module's comment-free
 * redis.conf (examples/modules/redis-server): the maxmemory lines, which the converge
 * would drop, are what the preview shows first, not forty lines of comments.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

const DEBIAN = '/etc/redis/redis.conf';
const CONF = '/etc/redis/redis.conf';
const EXAMPLE = resolve(import.meta.dirname, '../../examples/modules/redis-server/redis.conf');

const REDIS = {
  values: { maxmemory: { type: 'string', default: '0' } },
  secrets: { password: { in: CONF, match: '^requirepass\\s+(\\S+)\\s*$' } },
  files: { [CONF]: { source: 'redis/redis.conf' } },
};

/** Debian's redis.conf as an admin left it: a password, and memory capped with a policy. */
async function adminsRedisConf(): Promise<string> {
  const debian = await readFile(DEBIAN, 'utf8');
  const edited = debian
    .replace(/^# requirepass foobared$/m, 'requirepass HandMadeSecret42')
    .replace(/^# maxmemory <bytes>$/m, 'maxmemory 2gb')
    .replace(/^# maxmemory-policy noeviction$/m, 'maxmemory-policy allkeys-lru');
  assert.equal((edited.match(/^(requirepass|maxmemory)/gm) ?? []).length, 3, 'the edits were made');
  return edited;
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = !existsSync(DEBIAN) && `needs ${DEBIAN}: apt-get install redis-server`;

describe('a take preview of a long config', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ redis: REDIS });
    await mkdir(join(world.state, 'modules', 'redis'), { recursive: true });
    await writeFile(
      join(world.state, 'modules', 'redis', 'redis.conf'),
      await readFile(EXAMPLE, 'utf8'),
    );
    await world.onBox(CONF, await adminsRedisConf());
    assert.equal((await world.berth('adopt', 'box')).code, 0);
  });
  afterEach(() => world.cleanup());

  it("shows the admin's maxmemory lines within its first lines, the comments folded", {
    skip,
  }, async () => {
    const preview = await world.berth('take', 'box', 'redis');
    assert.equal(preview.code, 0, preview.stderr);
    const diff = preview.stdout.split('\n').filter((line) => line.startsWith('    '));
    assert.deepEqual(diff.slice(0, 3), [
      `    --- ${CONF} on box`,
      `    +++ ${CONF} as berth writes it`,
      '    (+3 −2205 lines: 2203 of them comments or blank)',
    ]);
    const first = diff.slice(0, 12);
    assert.ok(first.includes('    -maxmemory 2gb'), preview.stdout);
    assert.ok(first.includes('    -maxmemory-policy allkeys-lru'), preview.stdout);
    assert.ok(diff.length <= 41, 'at most about 40 lines');
    assert.doesNotMatch(preview.stdout, /HandMadeSecret42/);
  });

  it('shows the whole diff with --full-diff, under the same digest', { skip }, async () => {
    const preview = await world.berth('take', 'box', 'redis');
    const full = await world.berth('take', 'box', 'redis', '--full-diff');
    assert.equal(full.code, 0, full.stderr);
    const diff = full.stdout.split('\n').filter((line) => line.startsWith('    '));
    assert.ok(diff.length > 2_200, `all of it: ${diff.length} lines`);
    assert.doesNotMatch(full.stdout, /more lines of diff|only comments or blank lines/);
    assert.doesNotMatch(full.stdout, /HandMadeSecret42/);
    assert.equal(digestOf(full.stdout), digestOf(preview.stdout));
  });
});
