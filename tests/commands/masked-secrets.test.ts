/**
 * Secrets masked everywhere a preview goes: every value the vault holds for a node, of any
 * module, is `[secret NAME]` in the words, `--json`, the API's answer and a plan file; a
 * value too short to mask in place hides its whole line, `[a line holding secret NAME]`.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Faces, openFaces } from '../codes/faces.ts';
import { digestOf } from '../helpers/world.ts';

describe("another module's secret in a module's file", () => {
  let faces: Faces;
  let token: string;
  const conf = () => join(faces.rootOf('web1'), 'etc/b/b.conf');

  before(async () => {
    faces = await openFaces({
      modules: {
        // Module a keeps a token berth mints; module b's file is one a person edits.
        a: { description: 'a', secrets: { token: { path: '/etc/a/token' } } },
        b: { description: 'b', files: { '/etc/b/b.conf': { content: 'port = 1\n' } } },
      },
      nodes: ['web1'],
    });
    const { world } = faces;
    assert.equal((await world.berth('assign', 'web1', 'a')).code, 0);
    assert.equal((await world.berth('assign', 'web1', 'b')).code, 0);
    const preview = await world.berth('converge', 'web1');
    const act = await world.berth(
      'converge',
      'web1',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    );
    assert.equal(act.code, 0, act.stderr);
    token = (await readFile(join(faces.rootOf('web1'), 'etc/a/token'), 'utf8')).trim();
    assert.ok(token.length >= 32, token);
    // Someone pastes a's token into b's file.
    await writeFile(conf(), `port = 1\ntoken = ${token}\n`);
  });
  after(() => faces?.close());

  it('is [secret token] in the words, --json, the API answer and a plan file', async () => {
    const { world } = faces;
    const words = await world.berth('converge', 'web1');
    assert.equal(words.code, 0, words.stderr);
    assert.match(words.stdout, /\n {4}-token = \[secret token\]\n/);
    const json = await faces.line('converge', { node: 'web1' });
    const served = await faces.served('converge', { node: 'web1' });
    assert.equal(served.status, 200);
    const plan = join(world.dir, 'b.plan');
    assert.equal((await world.berth('converge', 'web1', '--out', plan)).code, 0);
    const shown = {
      words: words.stdout,
      json: JSON.stringify(json.body),
      api: JSON.stringify(served.body),
      plan: await readFile(plan, 'utf8'),
    };
    for (const [where, text] of Object.entries(shown)) {
      assert.equal(text.includes(token), false, `${where} shows a's token`);
      assert.match(text, /-token = \[secret token\]/, where);
    }
  });
});

describe('a secret shorter than 8 characters', () => {
  let faces: Faces;
  const conf = () => join(faces.rootOf('web1'), 'etc/c/c.conf');

  before(async () => {
    faces = await openFaces({
      modules: {
        c: {
          description: 'c, set up by hand with a three-character password',
          secrets: { pw: { in: '/etc/c/c.conf', match: '^password = (\\S+)$' } },
          files: {
            '/etc/c/c.conf': {
              content: 'name = q7z\npassword = {{secret pw}}\nport = 2\n',
            },
          },
        },
      },
      nodes: ['web1'],
    });
    // Set up by hand: its password, three characters, also its name.
    await mkdir(join(faces.rootOf('web1'), 'etc/c'), { recursive: true });
    await writeFile(conf(), 'name = q7z\npassword = q7z\nport = 1\n');
  });
  after(() => faces?.close());

  it('found: every line holding it is hidden whole, on both sides of the diff', async () => {
    const { world } = faces;
    assert.equal((await world.berth('adopt', 'web1')).code, 0);
    const take = await world.berth('take', 'web1', 'c');
    assert.equal(take.code, 0, take.stderr);
    const json = await faces.line('take', { node: 'web1', module: 'c' });
    const served = await faces.served('take', { node: 'web1', module: 'c' });
    for (const [where, text] of [
      ['words', take.stdout],
      ['json', JSON.stringify(json.body)],
      ['api', JSON.stringify(served.body)],
    ] as const) {
      assert.equal(text.includes('q7z'), false, `${where} shows the secret:\n${text}`);
      assert.match(text, / \[a line holding secret pw\]/, where);
      assert.match(text, /-port = 1/, where);
      assert.match(text, /\+port = 2/, where);
    }
    assert.equal(
      (await world.berth('take', 'web1', 'c', '--yes', '--digest', digestOf(take.stdout))).code,
      0,
    );
    // Taken: the vault holds it, and a converge's diff hides its lines alike.
    await writeFile(conf(), 'name = q7z\npassword = q7z\nport = 3\n');
    const converge = await world.berth('converge', 'web1');
    assert.equal(converge.code, 0, converge.stderr);
    assert.equal(converge.stdout.includes('q7z'), false, converge.stdout);
    assert.match(converge.stdout, / \[a line holding secret pw\]\n/);
  });
});
