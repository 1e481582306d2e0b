// Runs the test files that use a program a machine may lack once more, with those
// programs gone: a test that needs one must skip saying what to install, never fail, so
// that `npm ci && npm test` passes on a machine without them. CI runs it after `npm test`
// (.ci/run); see docs/operations.md.
//
// The programs are the executables of the Debian packages CI installs for the tests and
// a minimal Debian lacks (OPTIONAL), as this machine has them installed. They are hidden
// in a mount namespace of the run's own: each directory holding one is covered by a
// read-only overlay whose top layer whites them out, so that they are not there at all
// (a test's `needs` finds nothing, a spawn fails with ENOENT). Nothing outside the run
// sees them gone. Needs root, unshare and overlayfs.
//
//   node scripts/test-without.mjs [--list] [FILE...]
//
// --list names the programs and the test files, and runs nothing.
//
// Without files, it runs the test files that use one of the programs (filesUsing).

import { execFileSync, spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';

/** Packages CI installs for the tests that a minimal Debian lacks (bsdutils' script is essential). */
const OPTIONAL = [
  'openssh-server',
  'openssh-client',
  'sudo',
  'iproute2',
  'postgresql*',
  'redis-server',
  'redis-tools',
  'nginx*',
  'curl',
  'dpkg-dev',
  'systemd',
  'zsh',
  'fish',
  'tcsh',
  'age',
  'shellcheck',
  'chromium*',
];

if (process.getuid?.() !== 0) {
  console.error('test-without needs root: it hides programs in a mount namespace of its own');
  process.exit(1);
}

/** The executables the optional packages installed here, by the directory they are in. */
function hiddenPrograms() {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format
  const format = '${db:Status-Status} ${Package}\n';
  const listed = spawnSync('dpkg-query', ['-W', '-f', format, ...OPTIONAL], { encoding: 'utf8' });
  const installed = listed.stdout
    .split('\n')
    .filter((line) => line.startsWith('installed '))
    .map((line) => line.slice('installed '.length));
  const byDir = new Map();
  if (installed.length === 0) return byDir;
  const files = execFileSync('dpkg', ['-L', ...installed], { encoding: 'utf8' }).split('\n');
  for (const file of files) {
    if (!/\/s?bin\/[^/]+$/.test(file)) continue;
    let real;
    try {
      // /bin is /usr/bin here: the name a program is found by is where it is hidden.
      real = join(realpathSync(dirname(file)), basename(file));
      const info = statSync(real);
      if (!info.isFile() || (info.mode & 0o111) === 0) continue;
    } catch {
      continue;
    }
    const names = byDir.get(dirname(real)) ?? new Set();
    names.add(basename(real));
    byDir.set(dirname(real), names);
  }
  return byDir;
}

/**
 * The test files that use a hidden program: those that skip with `needs` (or whose tests/
 * helpers do, at any depth of imports: the fleet, the PostgreSQL server, age), and those
 * that spawn one by its name or path, theirs or a helper's (`execFile('fish', …)`).
 */
function filesUsing(programs) {
  const names = [...programs].map(escaped).join('|');
  const spawning = new RegExp(
    `\\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\\(\\s*['"\`](?:[^'"\`\\n]*/)?(?:${names})['"\`]`,
  );
  const sources = new Map();
  (function walk(dir) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) sources.set(path, readFileSync(path, 'utf8'));
    }
  })(resolve('tests'));
  const needs = resolve('tests/helpers/needs.ts');
  const imports = (path) =>
    [...(sources.get(path) ?? '').matchAll(/from '(\.[^']+)'/g)]
      .map((match) => resolve(dirname(path), match[1]))
      .filter((target) => sources.has(target));
  const marked = (path) => spawning.test(sources.get(path) ?? '') || imports(path).includes(needs);
  /** Whether `path`, or a module it imports at any depth, uses a hidden program. */
  const uses = (path) => {
    const seen = new Set([path]);
    const next = [path];
    for (let at = next.pop(); at !== undefined; at = next.pop()) {
      if (marked(at)) return true;
      for (const target of imports(at)) {
        if (seen.has(target)) continue;
        seen.add(target);
        next.push(target);
      }
    }
    return false;
  };
  return [...sources.keys()]
    .filter((path) => path.endsWith('.test.ts') && uses(path))
    .map((path) => relative(process.cwd(), path))
    .sort();
}

function escaped(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const args = process.argv.slice(2);
const list = args[0] === '--list';
const hidden = hiddenPrograms();
const programs = new Set([...hidden.values()].flatMap((names) => [...names]));
const given = list ? args.slice(1) : args;
const files = given.length > 0 ? given : filesUsing(programs);
console.log(
  `test-without: ${programs.size} programs hidden (${[...programs].sort().join(' ')}); ${files.length} test files run again${list ? `:\n${files.join('\n')}` : ''}`,
);
if (list) process.exit(0);

// Whiteouts, a directory of them for each directory covered, made outside the namespace.
const layers = mkdtempSync(join(tmpdir(), 'berth-test-without-'));
const report = join(layers, 'report.tap');
let status = 1;
try {
  const mounts = [];
  [...hidden].forEach(([dir, names], index) => {
    const layer = join(layers, String(index));
    mkdirSync(layer);
    for (const name of names) execFileSync('mknod', [join(layer, name), 'c', '0', '0']);
    mounts.push(layer, dir);
  });
  // Each pair of words is a layer of whiteouts and the directory it covers; then the run.
  // The packages' files are read-only there, and so is dpkg's database: a test that would
  // install a package fails before it begins, rather than half-way with files missing.
  const script = `set -e
while [ "$1" != -- ]; do mount -t overlay overlay -o "lowerdir=$1:$2" "$2"; shift 2; done
shift
mount --bind /var/lib/dpkg /var/lib/dpkg
mount -o remount,bind,ro /var/lib/dpkg
exec "$@"`;
  const run = spawnSync(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      script,
      'sh',
      ...mounts,
      '--',
      process.execPath,
      'scripts/test.mjs',
      '--tap',
      report,
      ...files,
    ],
    { stdio: 'inherit' },
  );
  status = run.status ?? 1;
  // A test skipped here skips for a program gone, and says what to install (`needs`).
  const wordless = readFileSync(report, 'utf8')
    .split('\n')
    .filter((line) => / # SKIP\b/.test(line) && !/ # SKIP .*apt-get install /.test(line));
  if (wordless.length > 0) {
    console.error(
      `test-without: ${wordless.length} tests skipped without saying what to install:\n${wordless.join('\n')}`,
    );
    status = 1;
  }
} finally {
  rmSync(layers, { recursive: true, force: true });
}
process.exit(status);
