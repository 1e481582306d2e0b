/**
 * This machine's apt and dpkg, held by one test file at a time.
 *
 * Some suites install and purge with this machine's apt (a node whose root is `/`), one
 * puts apt configuration of its own in place for a while, and a fleet host's `/var` is an
 * overlay over this machine's, so its dpkg database shows what the machine's holds. The
 * runner runs test files side by side: two of these at once would meet each other's lock,
 * configuration or half-installed package. Each takes this lock for its whole suite.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keepAsFound } from './machine-files.ts';

const LOCK = '/tmp/berth-tests-machine-apt.lock';

/** Waits for the machine's apt; the function it gives back lets it go. */
export async function holdMachineApt(): Promise<() => Promise<void>> {
  for (;;) {
    try {
      const handle = await open(LOCK, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(LOCK, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A holder that died (a run killed mid-suite) left its lock: taken over.
    const holder = Number(await readFile(LOCK, 'utf8').catch(() => ''));
    if (holder > 0 && !alive(holder)) await rm(LOCK, { force: true });
    else await new Promise((done) => setTimeout(done, 200));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The version of `name` this machine's apt lists offer, or why a test of it cannot run here. */
export function candidateOf(name: string): string | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'needs root' };
  if (!existsSync('/usr/bin/apt-get')) return { skip: 'needs apt-get' };
  const policy = execFileSync('apt-cache', ['policy', name], {
    encoding: 'utf8',
    env: { ...process.env, LC_ALL: 'C' },
  });
  const candidate = /Candidate: (\S+)/.exec(policy)?.[1];
  if (!candidate || candidate === '(none)')
    return { skip: `needs ${name} in apt's lists (apt-get update)` };
  return candidate;
}

/** An apt configuration put in place for a while, to have apt refuse. */
const REFUSING = '/etc/apt/apt.conf.d/99berth-test-refuse-hello';

/**
 * Makes this machine's apt refuse any install of `hello=<version>` (berth's), and no other,
 * with a script kept in `dir` (apt names it when it refuses); `undo` takes it away again.
 */
export async function refuseHelloInstalls(
  dir: string,
): Promise<{ script: string; undo: () => Promise<void> }> {
  const refuser = join(dir, 'refuse-hello.sh');
  await writeFile(
    refuser,
    `p=$PPID
for i in 1 2 3; do
  if tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q ' hello='; then exit 1; fi
  p=$(awk '/^PPid:/ { print $2 }' /proc/$p/status 2>/dev/null) || break
done
`,
  );
  // The machine's own file of that name, if it had one, is given back as it was.
  const kept = keepAsFound(REFUSING);
  await writeFile(REFUSING, `DPkg::Pre-Invoke {"sh ${refuser}";};\n`);
  return { script: refuser, undo: async () => kept.giveBack() };
}
