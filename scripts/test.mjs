// Runs test files on Node's runner with an age identity of the suite's own.
//
// berth makes its identity the first time a command needs one and says so once on standard
// error. Tests run side by side as one user, so on a fresh home one of them would meet that
// line by chance, and the suite would write into the developer's own ~/.config. Each run
// gets a throw-away $XDG_CONFIG_HOME holding an identity instead; tests of the identity
// itself set their own.
//
//   node scripts/test.mjs [--concurrency N] [--tap FILE] DIR_OR_FILE...
//
// --tap FILE writes the run's TAP there too, for a script to read (scripts/test-without.mjs).

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateIdentity } from 'age-encryption';

const args = process.argv.slice(2);
// Three files at once on two cores: most suites wait on sshd, apt, PostgreSQL and daemons
// more than they compute (a run at 3 took 15.7 minutes where one at 2 took 20.1, on the
// same loaded machine).
let concurrency = '3';
let tap;
const roots = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--concurrency') concurrency = args[++i];
  else if (args[i] === '--tap') tap = args[++i];
  else roots.push(args[i]);
}
// The runner's own report on the terminal, as without --tap.
const reporters = tap
  ? [
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
    ]
  : [];

/** Every `*.test.ts` under the roots, in one sorted order. */
const files = roots
  .flatMap(function found(path) {
    if (!statSync(path).isDirectory()) return [path];
    return readdirSync(path).flatMap((entry) => {
      const inner = join(path, entry);
      return statSync(inner).isDirectory() || entry.endsWith('.test.ts') ? found(inner) : [];
    });
  })
  .sort();

const config = await mkdtemp(join(tmpdir(), 'berth-tests-config-'));
let status = 1;
try {
  await mkdir(join(config, 'berth'), { mode: 0o700 });
  await writeFile(join(config, 'berth', 'identity.txt'), `${await generateIdentity()}\n`, {
    mode: 0o600,
  });
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...files],
    { stdio: 'inherit', env: { ...process.env, XDG_CONFIG_HOME: config } },
  );
  status = run.status ?? 1;
} finally {
  await rm(config, { recursive: true, force: true });
}
process.exit(status);
