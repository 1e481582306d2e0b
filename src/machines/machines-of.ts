import { accessSync, constants } from 'node:fs';
import type { Settings } from '../model/settings.ts';
import { type Machine, MachineError, type ReachMachine } from './machine.ts';
import { rootedMachine } from './rooted-machine.ts';
import { type SshMachine, sshMachine, sshRuntimeDir } from './ssh-machine.ts';

/**
 * The ssh machines of this process, one a node and way of reaching it, so that every act
 * on a node shares its ControlMaster.
 */
const sshMachines = new Map<string, SshMachine>();

/** Picks each node's machine from the inventory: a root on this machine, or ssh. */
export function machinesOf(settings: Settings): ReachMachine {
  return (node) => {
    const entry = Object.hasOwn(settings.nodes, node) ? settings.nodes[node] : undefined;
    if (!entry) return unreachable('it is not in the inventory');
    if ('root' in entry) return rootedMachine(entry.root);
    const { sshConfig } = settings;
    if (sshConfig !== undefined) {
      try {
        accessSync(sshConfig, constants.R_OK);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const why = code === 'ENOENT' ? 'there is no such file' : (error as Error).message;
        return unreachable(`${sshConfig}, the sshConfig of berth.json, cannot be read: ${why}`);
      }
    }
    const key = JSON.stringify([node, entry.ssh, entry.port, entry.sudo, sshConfig]);
    let machine = sshMachines.get(key);
    if (!machine) {
      machine = sshMachine({
        node,
        destination: entry.ssh,
        port: entry.port,
        sudo: entry.sudo,
        ...(sshConfig === undefined ? {} : { sshConfig }),
        runtimeDir: sshRuntimeDir(),
      });
      sshMachines.set(key, machine);
    }
    return machine;
  };
}

function unreachable(why: string): Machine {
  const fail = () => Promise.reject(new MachineError('unreachable', why));
  return {
    survey: fail,
    apply: async () => ({ done: 0, failure: new MachineError('unreachable', why) }),
    run: fail,
    install: fail,
    refreshPackages: fail,
    unholdStarts: fail,
    close: async () => {},
  };
}
