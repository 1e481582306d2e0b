/**
 * A local apt repository for the fleet's hosts (startFleet's `aptRepository`), which reach
 * no network: real Debian .deb files fetched once by this machine's `apt-get download` into
 * a cache kept between runs, with every package they depend on, and .debs a test builds
 * itself (`dpkg-deb --build`), indexed by `dpkg-scanpackages`. It lives under /var/tmp: a
 * host's /tmp is its own, its /var an overlay over this machine's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { needs } from '../helpers/needs.ts';

/** Where the downloaded .debs are kept between runs: fetching them is the slow part. */
const CACHE = '/var/tmp/berth-test-debs';

/**
 * A package a test builds: its name, version, its postinst script (none when not given),
 * the files it ships (absolute path: content; those under /etc are its conffiles, as
 * debhelper makes them), and what it depends on (a Depends field).
 */
export interface BuiltPackage {
  name: string;
  version: string;
  postinst?: string;
  files?: Record<string, string>;
  depends?: string;
}

/** Why a repository cannot be built here, or undefined when it can. */
export function aptRepositoryUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  return (
    needs('apt-get', 'apt') ||
    needs('dpkg-scanpackages', 'dpkg-dev') ||
    needs('dpkg-deb', 'dpkg') ||
    undefined
  );
}

/** The names `packages` need, themselves included, as this machine's lists say (no Recommends). */
function closure(packages: readonly string[]): string[] {
  const said = execFileSync(
    'apt-cache',
    [
      ...['depends', '--recurse', '--no-recommends', '--no-suggests', '--no-conflicts'],
      ...['--no-breaks', '--no-replaces', '--no-enhances', ...packages],
    ],
    { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' }, maxBuffer: 64 << 20 },
  );
  const names = said.split('\n').filter((line) => /^[a-z0-9][a-z0-9+.-]+$/.test(line));
  return [...new Set(names)].sort();
}

/**
 * Builds a repository of `packages` (and all they depend on) and `built` in a new
 * directory under /var/tmp, returning it; or the reason it cannot (`apt-get download`
 * could not fetch them, say) as `{ skip }`. The caller removes the directory.
 */
export async function buildAptRepository(
  packages: readonly string[],
  built: readonly BuiltPackage[] = [],
): Promise<string | { skip: string }> {
  const unavailable = aptRepositoryUnavailable();
  if (unavailable) return { skip: unavailable };
  const names = packages.length > 0 ? closure(packages) : [];
  await mkdir(CACHE, { recursive: true });
  const cached = () => new Set(readdirSync(CACHE).map((file) => file.split('_')[0]));
  const lacking = names.filter((name) => !cached().has(name));
  if (lacking.length > 0) {
    const fetched = spawnSync('apt-get', ['download', '-q', ...lacking], {
      cwd: CACHE,
      encoding: 'utf8',
      env: { ...process.env, LC_ALL: 'C' },
    });
    if (fetched.status !== 0)
      return {
        skip: `apt-get download could not fetch the test's packages: ${fetched.stderr.trim().split('\n').at(-1)}`,
      };
  }
  const dir = await mkdtemp('/var/tmp/berth-test-apt-');
  await chmod(dir, 0o755);
  const wanted = new Set(names);
  for (const file of readdirSync(CACHE))
    if (file.endsWith('.deb') && wanted.has(file.split('_')[0] as string))
      await copyFile(join(CACHE, file), join(dir, file));
  for (const item of built) await buildPackage(dir, item);
  await index(dir);
  return dir;
}

/** The repository's `Packages` index, made anew from its .debs. */
async function index(dir: string): Promise<void> {
  const said = execFileSync('dpkg-scanpackages', ['--multiversion', '.'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    maxBuffer: 64 << 20,
  });
  await writeFile(join(dir, 'Packages'), said);
}

/**
 * Builds `item` into the repository anew, in place of a .deb of the same name and version
 * (the same version with other bits, say), and indexes it again: a host sees it once its
 * lists are refreshed.
 */
export async function rebuildInRepository(dir: string, item: BuiltPackage): Promise<void> {
  await buildPackage(dir, item);
  await index(dir);
}

/**
 * Makes the repository's index offer `name` at `version`, whatever its .deb says: a
 * version no dpkg-deb would build (`1.0;id>/tmp/x;:`), as a hostile repository could.
 */
export async function offerVersion(dir: string, name: string, version: string): Promise<void> {
  const path = join(dir, 'Packages');
  const entries = (await readFile(path, 'utf8')).split('\n\n');
  const changed = entries.map((entry) =>
    entry.startsWith(`Package: ${name}\n`)
      ? entry.replace(/^Version: .*$/m, `Version: ${version}`)
      : entry,
  );
  await writeFile(path, changed.join('\n\n'));
}

/** A tiny package of the test's own, of architecture all, built into `dir`. */
async function buildPackage(dir: string, item: BuiltPackage): Promise<void> {
  const tree = join(dir, `${item.name}.tree`);
  await mkdir(join(tree, 'DEBIAN'), { recursive: true });
  await writeFile(
    join(tree, 'DEBIAN', 'control'),
    [
      `Package: ${item.name}`,
      `Version: ${item.version}`,
      ...(item.depends === undefined ? [] : [`Depends: ${item.depends}`]),
      'Architecture: all',
      'Maintainer: berth tests <tests@berth.invalid>',
      `Description: ${item.name}, built by berth's tests`,
      '',
    ].join('\n'),
  );
  if (item.postinst !== undefined)
    await writeFile(join(tree, 'DEBIAN', 'postinst'), item.postinst, { mode: 0o755 });
  for (const [path, content] of Object.entries(item.files ?? {})) {
    await mkdir(join(tree, dirname(path)), { recursive: true });
    await writeFile(join(tree, path), content);
  }
  const conffiles = Object.keys(item.files ?? {}).filter((path) => path.startsWith('/etc/'));
  if (conffiles.length > 0)
    await writeFile(join(tree, 'DEBIAN', 'conffiles'), `${conffiles.join('\n')}\n`);
  execFileSync(
    'dpkg-deb',
    ['--root-owner-group', '--build', tree, join(dir, `${item.name}_${item.version}_all.deb`)],
    { stdio: 'ignore' },
  );
  await rm(tree, { recursive: true, force: true });
}
