/**
 * This machine's apt and dpkg, held by one test file at a time.
 *
 * Some suites install and purge with this machine's apt (a node whose root is `/`), one
 * puts apt configuration of its own in place for a while, and a fleet host's `/var` is an
 * overlay over this machine's, so its dpkg database shows what the machine's holds. The
 * runner runs test files side by side: two of these at once would meet each other's lock,
 * configuration or half-installed package. Each takes this lock for its whole suite.
 */
import { open, readFile, rm } from 'node:fs/promises';

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
