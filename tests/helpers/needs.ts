/**
 * Whether this machine has a program a test runs, for the test runner's `skip` option: a
 * machine without it skips the test saying what to install (and the summary counts it as
 * skipped), where spawning it would fail with ENOENT. `.ci/run` installs every one.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where a program is looked for: PATH, then the sbin directories a user's PATH may lack. */
function places(): string[] {
  const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  return [...path, '/usr/local/sbin', '/usr/sbin', '/sbin'];
}

/** Whether `program` (a name, or an absolute path) is on this machine. */
export function has(program: string): boolean {
  if (program.startsWith('/')) return existsSync(program);
  return places().some((dir) => existsSync(join(dir, program)));
}

/**
 * "needs zsh: apt-get install zsh" when `program` is not here, else false: for
 * `it('…', { skip: needs('zsh', 'zsh') }, …)`. `debianPackage` is the package holding it;
 * several join with `||`.
 */
export function needs(program: string, debianPackage: string): string | false {
  return has(program) ? false : `needs ${program}: apt-get install ${debianPackage}`;
}
