/**
 * The package as a user gets it: `npm pack`, then the tarball installed into an empty
 * directory and run through npx, all offline. The bundle, dist/, is an entry and the chunks
 * it loads, which import only Node's own modules and each other, so the package ships
 * them, its README and LICENSE, and nothing else; it needs no package at run time, and
 * installing it runs no script.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const REPO = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * npm as on a machine with no settings of its own: none of the user's npmrc (whose
 * settings are the user's business, warnings included), none of the `npm_config_*`
 * that `npm test` hands down, a cache of its own, and no network.
 */
function npmEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^npm_/i.test(name) && name !== 'NODE_EXTRA_CA_CERTS') env[name] = value;
  return {
    ...env,
    npm_config_userconfig: join(dir, 'npmrc'),
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<Run>((done) => {
    execFile(command, args, { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

describe('the package, packed, installed and run offline', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let tarball: string;
  let packed: string[];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-package-'));
    await writeFile(join(dir, 'npmrc'), '');
    env = npmEnv(dir);
    // `npm test` has built dist/ already; packing would run `prepare` and build it again
    // under the feet of the other test files running the binary meanwhile.
    const pack = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', dir],
      REPO,
      env,
    );
    assert.equal(pack.code, 0, pack.stderr);
    const [report] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(report);
    tarball = join(dir, report.filename);
    packed = report.files.map((file) => file.path).sort();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('ships dist/ (the entry and its chunks), README, LICENSE and package.json, and no dependency', async () => {
    const dist = await filesUnder(join(REPO, 'dist'));
    assert.ok(dist.includes('dist/berth.mjs'), dist.join(', '));
    assert.ok(dist.length > 1, 'the entry has chunks');
    assert.deepEqual(packed, ['LICENSE', 'README.md', ...dist, 'package.json'].sort());
    const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'the bundle needs no package at run time');
    // Each file imports Node's modules and other files of dist/, which are shipped.
    const outside: string[] = [];
    let chunks = 0;
    for (const file of dist) {
      for (const name of importsOf(await readFile(join(REPO, file), 'utf8'))) {
        if (isBuiltin(name)) continue;
        if (name.startsWith('.') && dist.includes(join(dirname(file), name))) {
          chunks++;
          continue;
        }
        // pg requires its native binding only through `pg.native`, which berth never reads.
        if (name === 'pg-native') continue;
        outside.push(`${file} imports ${name}`);
      }
    }
    assert.ok(chunks > 0, 'the imports of chunks were found');
    assert.deepEqual(outside, [], 'the bundle imports only Node modules and its own files');
  });

  it('installs into an empty directory with no warning, no script and no other package', async () => {
    const app = join(dir, 'app');
    await mkdir(app);
    const install = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--foreground-scripts', '--loglevel', 'info', tarball],
      app,
      env,
    );
    const said = install.stdout + install.stderr;
    assert.equal(install.code, 0, said);
    assert.doesNotMatch(said, /warn/i);
    // A script npm runs is announced ("npm info run berth@… postinstall") and, in the
    // foreground, its command line ("> berth@… postinstall").
    assert.doesNotMatch(said, /^npm info run |^> /m);
    assert.deepEqual(
      (await readdir(join(app, 'node_modules'))).filter((name) => !name.startsWith('.')),
      ['berth'],
    );
    const berth = join(app, 'node_modules/.bin/berth');
    const shown = await run(berth, ['--version'], app, env);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^berth/${version.replace(/\./g, '\\.')} `));
    const help = await run(berth, ['--help'], app, env);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /Usage:\n {2}\$ berth <command>/);
    // A command that loads chunks beyond the start's: the stores, and `status`'s own words.
    const state = join(dir, 'state');
    await mkdir(state);
    const status = await run(berth, ['--state', state, 'status'], app, env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^ {2}to run: nothing$/m);
  });

  it('runs through npx --package with no warning', async () => {
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    const npx = await run(
      'npx',
      ['--yes', '--package', tarball, 'berth', '--version'],
      elsewhere,
      env,
    );
    assert.equal(npx.code, 0, npx.stderr);
    assert.match(npx.stdout, new RegExp(`^berth/${version.replace(/\./g, '\\.')} `));
    assert.doesNotMatch(npx.stderr, /warn/i);
  });
});

/** The files under `dir`, by their path from the repository (`dist/berth.mjs`). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(REPO, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * The modules a file of the bundle imports: its static imports start a line (`import {`
 * may span lines, to its `from`); its dynamic ones and a CommonJS library's requires are
 * calls (a comment quoting an example `import … from 'x'` is indented, and calls nothing).
 */
function importsOf(bundle: string): string[] {
  return [
    ...new Set(
      [
        ...bundle.matchAll(/^import\b[^;]*?\bfrom\s*["']([^"']+)["']/gm),
        ...bundle.matchAll(/^import\s*["']([^"']+)["']/gm),
        ...bundle.matchAll(/\b(?:__require|require|import)\(\s*["']([^"']+)["']\s*\)/g),
      ].map((match) => match[1] as string),
    ),
  ];
}
