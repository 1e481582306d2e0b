/**
 * The package as a user gets it: `npm pack`, then the tarball installed into an empty
 * directory and run through npx, all offline. The bundle is one file that imports only
 * Node's own modules, so the package ships that file, its README and LICENSE, and
 * nothing else; it needs no package at run time, and installing it runs no script.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync } from 'node:zlib';

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

  it('ships the one bundled file, README, LICENSE and package.json, and no dependency', async () => {
    assert.deepEqual(packed, ['LICENSE', 'README.md', 'dist/berth.mjs', 'package.json']);
    const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    assert.deepEqual(manifest.dependencies ?? {}, {}, 'the bundle needs no package at run time');
    const bundle = await readFile(join(REPO, 'dist/berth.mjs'), 'utf8');
    const imported = importsOf(bundle);
    assert.ok(imported.includes('node:module'), 'the imports were found');
    // The libraries only `berth api`, a PostgreSQL store, a preview's diff, `berth openapi`
    // and the vault's sealing off Node use are kept in the bundle as text (brotli, as
    // base64) that becomes a module when needed; they too must import only Node's modules.
    const kept = [...bundle.matchAll(/["']([A-Za-z0-9+/]{1000,}={0,2})["']/g)].map((match) =>
      brotliDecompressSync(Buffer.from(match[1] as string, 'base64')).toString('utf8'),
    );
    // http, jose, pg, openapi, noble and diff.
    assert.equal(kept.length, 6, 'the six groups kept as text were found');
    assert.ok(
      kept.some((text) => text.includes('node_modules/pg/lib/client.js')),
      'pg is one of them',
    );
    assert.ok(
      kept.some((text) => text.includes('function structuredPatch(')),
      'jsdiff is one of them',
    );
    assert.ok(
      kept.some((text) => text.includes(',chacha20poly1305=wrapCipher(')),
      "@noble's ciphers, which seal the vault where node:crypto is not, are one of them",
    );
    const inKept = kept.flatMap((text) =>
      // Minified: an import need not start a line, and CommonJS requires go through __require.
      [
        ...text.matchAll(/\bimport\s*(?:[\w$*{][^;]*?\bfrom\s*)?["']([^"']+)["']/g),
        ...text.matchAll(/\b(?:__require|require|import)\(\s*["']([^"']+)["']\s*\)/g),
      ].map((match) => match[1] as string),
    );
    assert.deepEqual(
      [...imported, ...inKept].filter((name) => !isBuiltin(name)),
      [],
      'the bundle imports only Node modules',
    );
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

/**
 * The modules a bundle imports: its static imports start a line; its dynamic ones are
 * calls (a comment quoting an example `import … from 'x'` is indented, and calls nothing).
 */
function importsOf(bundle: string): string[] {
  return [
    ...new Set(
      [
        ...bundle.matchAll(/^import\b[^;\n]*?\bfrom\s*["']([^"']+)["']/gm),
        ...bundle.matchAll(/\b(?:require|import)\(\s*["']([^"']+)["']\s*\)/g),
      ].map((match) => match[1] as string),
    ),
  ];
}
