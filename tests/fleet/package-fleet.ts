/**
 * The fleet of the suites that install packages: this machine's apt held for the run (a
 * host's /etc and /var lie over the machine's, so apt run here meanwhile would show
 * through), hosts with a /usr of their own and apt pointed at the suite's local repository
 * (apt-repository.ts), and a directory for berth's ssh sockets. `stop` undoes all of it,
 * the repository too; a start that fails undoes what it began.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { holdMachineApt } from '../helpers/machine-apt.ts';
import { exitMasters, type Fleet, startFleet } from './fleet.ts';

export interface PackageFleet {
  fleet: Fleet;
  /** Where berth keeps its ssh connections' sockets (its XDG_RUNTIME_DIR). */
  runtime: string;
  stop(): Promise<void>;
}

export async function packageFleet(options: {
  hosts: number;
  repository: string;
  sshdOptions?: string[];
}): Promise<PackageFleet> {
  const release = await holdMachineApt();
  let fleet: Fleet | undefined;
  let runtime: string | undefined;
  const stop = async () => {
    if (runtime) await exitMasters(join(runtime, 'berth-ssh'));
    await fleet?.stop();
    if (runtime) await rm(runtime, { recursive: true, force: true });
    await rm(options.repository, { recursive: true, force: true });
    await release();
  };
  try {
    fleet = await startFleet({
      hosts: options.hosts,
      ownUsr: true,
      aptRepository: options.repository,
      ...(options.sshdOptions ? { sshdOptions: options.sshdOptions } : {}),
    });
    // Short: a socket's path under it must fit in 108 bytes.
    runtime = await mkdtemp('/tmp/bfp-');
    return { fleet, runtime, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
