/**
 * Speed goals that hold without a clock (docs/performance.md): what a start evaluates
 * and how big the bundle is. The libraries kept in the bundle as compressed text (the
 * HTTP stack, jose, pg, jsdiff, and any group added beside them) are each made a module
 * only by a command that uses it; `berth status` and `--version` make none, and so never
 * load node:zlib, which every group is decompressed with. A preload records, as the
 * process ends, Node's own modules loaded and each group decompressed.
 */
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { countingCopy, readEvaluated } from './helpers/evaluated.ts';
import { BERTH, makeWorld, runBerth, runNode, type World } from './helpers/world.ts';

/**
 * The bundle whole, and the part of it a start parses (all but the groups kept as text):
 * a budget. It grew from 640,000 and 460,000 when every command came to return a typed
 * result that one renderer puts into words at the edge, and the vault to write its own
 * age files (637,000 and 461,000 then); by 2,000 parsed when age's base64 and bech32
 * came into the bundle from a group that cost a sealing process 10 ms to make; by 2,000
 * when `nodes` and `validate` came to read berth.json's `run`, the journal to tell a failed
 * act from a refused one, and a digest to cover a check by its exit alone; by 3,000
 * when a secret's file another user planted came to be taken back, with the survey saying
 * who berth acts as (the plan's code, which every converge runs); and by 2,000 when a
 * subject's target came to be read through its grants (in the act runner, one for both
 * faces, so not in the API's group); and by 2,000 when other tools' flags (--limit,
 * --check, -auto-approve) came to be answered with berth's way; and by 12,000 when a preview came to show a diff shared by
 * several nodes once, adopt to end with a recap, and take and converge to ask at a terminal
 * and to write and act on plan files; and by 6,000 when records came to keep every key a
 * user gives (`constructor` too), and groups and needs to be walked with a stack of berth's own; and by 3,000 when each
 * kept preview came to be a file of its own; and by 28,000 when modules came to install
 * their packages (apt's scripts and answers, the plan of a module's packages and its words).
 */
const MOST_BUNDLE_BYTES = 720_000;
const MOST_PARSED_BYTES = 545_000;

/** Writes, at exit, Node's modules loaded and the groups decompressed (by what they hold). */
const PRELOAD = `
const zlib = require('node:zlib');
const { writeFileSync } = require('node:fs');
const made = [];
const decompress = zlib.brotliDecompressSync;
zlib.brotliDecompressSync = function (...args) {
  const text = decompress.apply(this, args).toString('utf8');
  made.push(/sourceURL=berth:(\\w+)/.exec(text)?.[1] ?? (text.includes('function structuredPatch(') ? 'diff' : 'unknown'));
  if (text.includes(',chacha20poly1305=wrapCipher(')) made.push('@noble/ciphers');
  return Buffer.from(text);
};
const loadedBefore = new Set(process.moduleLoadList);
process.on('exit', () => {
  const loaded = process.moduleLoadList
    .filter((name) => !loadedBefore.has(name) && name.startsWith('NativeModule '))
    .map((name) => name.slice('NativeModule '.length));
  writeFileSync(process.env.BERTH_TEST_LOADED, JSON.stringify({ loaded, made }));
});
`;

interface Loaded {
  /** Node's public modules loaded after the preload's own. */
  loaded: string[];
  /** The groups kept as text that were made modules (http, jose, pg, diff…), and @noble/ciphers if in one. */
  made: string[];
}

describe('what a start pays for', () => {
  let world: World;
  let preload: string;
  const report = () => join(world.dir, 'loaded.json');
  async function run(...args: string[]): Promise<Loaded> {
    const done = await runBerth(['--state', world.state, ...args], {
      NODE_OPTIONS: `--require ${preload}`,
      BERTH_TEST_LOADED: report(),
    });
    assert.equal(done.code, 0, done.stderr);
    return JSON.parse(await readFile(report(), 'utf8')) as Loaded;
  }

  before(async () => {
    world = await makeWorld({
      conf: { files: { '/etc/conf/app.conf': { content: 'port 2\n' } } },
    });
    preload = join(world.dir, 'preload.cjs');
    await writeFile(preload, PRELOAD);
    await world.onBox('/etc/conf/app.conf', 'port 1\n');
    assert.equal((await world.berth('assign', 'box', 'conf')).code, 0);
    assert.equal((await world.berth('adopt', 'box')).code, 0);
  });
  after(() => world.cleanup());

  it('berth status makes no group, and loads neither zlib nor the HTTP stack', async () => {
    const { loaded, made } = await run('status');
    assert.deepEqual(made, []);
    for (const name of ['zlib', 'http', 'https', 'net', 'crypto'])
      assert.ok(!loaded.includes(name), `berth status loads node:${name}: ${loaded.join(', ')}`);
  });

  it('berth --version makes no group either', async () => {
    const { loaded, made } = await run('--version');
    assert.deepEqual(made, []);
    assert.ok(!loaded.includes('zlib'), loaded.join(', '));
  });

  /** The modules a run of the bundle evaluates (a copy that counts them). */
  async function evaluatedBy(...args: string[]): Promise<string[]> {
    const copy = await countingCopy(BERTH, world.dir);
    const record = join(world.dir, 'evaluated.json');
    const done = await runNode([copy, '--state', world.state, ...args], {
      BERTH_EVALUATED: record,
    });
    assert.equal(done.code, 0, done.stderr);
    return (await readEvaluated(record)).modules;
  }
  // Code a start never needs: a command's own, and a machine kind's (ssh's scripts, the
  // rooted machine's safe walks). The table names the commands; each is loaded at its run.
  // The steps' words are not acting: `status --check` says a check with them.
  const ACTING =
    /^src\/(commands\/(?!table\.ts$|steps\/words\.ts$)|machines\/(ssh|rooted)|survey\.ts$|secrets\.ts$)/;

  it("berth --version evaluates no command's code, no machine's and no store's", async () => {
    const evaluated = await evaluatedBy('--version');
    assert.ok(evaluated.includes('src/cli/main.ts'), evaluated.join(' '));
    const acting = evaluated.filter((name) => ACTING.test(name) || name.startsWith('src/stores/'));
    assert.deepEqual(acting, []);
  });

  it("berth status evaluates no command's code and no machine's", async () => {
    const evaluated = await evaluatedBy('status');
    assert.ok(evaluated.includes('src/stores/file-store.ts'), evaluated.join(' '));
    assert.deepEqual(
      evaluated.filter((name) => ACTING.test(name)),
      [],
    );
  });

  it('a converge evaluates its command and the machine it reaches', async () => {
    const evaluated = await evaluatedBy('converge', 'box');
    for (const name of ['src/commands/converge.ts', 'src/machines/rooted-machine.ts'])
      assert.ok(evaluated.includes(name), `${name} is not among ${evaluated.join(' ')}`);
  });

  it('a preview with a diff makes jsdiff, and only it', async () => {
    const preview = await runBerth(['--state', world.state, 'take', 'box', 'conf']);
    assert.match(preview.stdout, /^ {4}-port 1$/m, 'the preview has a diff');
    const { made } = await run('take', 'box', 'conf');
    assert.deepEqual(made, ['diff']);
  });

  it("a command that opens sealed values makes no group and loads no zlib: age's text is berth's own, its cryptography node:crypto's", async () => {
    const { loaded, made } = await run('converge', 'box');
    const vault = JSON.parse(
      await readFile(join(world.state, 'nodes', 'box', 'vault.json'), 'utf8'),
    ) as { sealed?: string; key: string };
    assert.equal(vault.sealed, 'age');
    assert.match(vault.key, /^-----BEGIN AGE ENCRYPTED FILE-----\n/);
    assert.deepEqual(made, []);
    assert.ok(loaded.includes('crypto'), loaded.join(', '));
    assert.ok(!loaded.includes('zlib'), loaded.join(', '));
  });

  it(`the bundle is at most ${MOST_BUNDLE_BYTES} bytes, ${MOST_PARSED_BYTES} of them parsed at start`, async () => {
    const { size } = await stat(BERTH);
    assert.ok(size <= MOST_BUNDLE_BYTES, `dist/berth.mjs is ${size} bytes`);
    const bundle = await readFile(BERTH, 'utf8');
    const kept = [...bundle.matchAll(/["']([A-Za-z0-9+/]{1000,}={0,2})["']/g)].reduce(
      (sum, match) => sum + (match[1] as string).length,
      0,
    );
    assert.ok(kept > 0, 'the groups kept as text were found');
    const parsed = Buffer.byteLength(bundle) - kept;
    assert.ok(parsed <= MOST_PARSED_BYTES, `a start parses ${parsed} bytes`);
  });

  it('a start parses none of jsdiff, age, hono, jose or pg: they are kept as text', async () => {
    const bundle = await readFile(BERTH, 'utf8');
    // esbuild names each module it bundles in a comment line: cac and valibot are there.
    const libraries = new Set(
      [...bundle.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]),
    );
    assert.ok(libraries.has('cac'), [...libraries].join(', '));
    for (const name of [
      'diff',
      '@scure/base',
      '@noble/ciphers',
      'hono',
      '@hono/node-server',
      'jose',
      'pg',
    ])
      assert.ok(!libraries.has(name), `${name} is parsed at every start`);
    assert.doesNotMatch(bundle, /function structuredPatch\(/);
  });
});
