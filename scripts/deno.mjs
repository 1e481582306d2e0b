// Runs the Deno that checks and tests berth's core, installing it first when missing.
//
// Deno comes from the npm registry: the binary is inside @deno/<platform>'s tarball. It is
// not a devDependency because a lock file must name every platform's package, and the
// registries this project uses offer Deno's for linux-x64 only; so it is installed here,
// pinned, beside node_modules' own packages, where `npm ci` clears it with the rest. On a
// platform without such a package the Deno part is skipped, saying why.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const VERSION = '2.9.6';
const platform = `${process.platform}-${process.arch}`;
const PACKAGES = { 'linux-x64': '@deno/linux-x64-glibc' };
const name = PACKAGES[platform];
if (!name) {
  console.log(`berth's Deno part is skipped: no Deno for ${platform} from the npm registry here`);
  process.exit(0);
}

const prefix = join(import.meta.dirname, '..', 'node_modules', '.cache', `deno-${VERSION}`);
const binary = join(prefix, 'node_modules', name, 'deno');
if (!existsSync(binary)) {
  const install = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-package-lock',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${name}@${VERSION}`,
    ],
    { stdio: 'inherit' },
  );
  if (install.status !== 0 || !existsSync(binary)) {
    console.error(`Deno ${VERSION} could not be installed from the npm registry (${name})`);
    process.exit(1);
  }
}
const run = spawnSync(binary, process.argv.slice(2), {
  stdio: 'inherit',
  env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' },
});
process.exit(run.status ?? 1);
