import type { Settings } from '../settings.ts';
import { type Machine, MachineError, type ReachMachine } from './machine.ts';
import { rootedMachine } from './rooted-machine.ts';

/** Picks each node's machine from the inventory: a root on this machine, or ssh. */
export function machinesOf(settings: Settings): ReachMachine {
  return (node) => {
    const entry = Object.hasOwn(settings.nodes, node) ? settings.nodes[node] : undefined;
    if (entry && 'root' in entry) return rootedMachine(entry.root);
    return unreachable(
      entry
        ? `it is reached over ssh (${entry.ssh}), which this berth cannot do yet`
        : 'it is not in the inventory',
    );
  };
}

function unreachable(why: string): Machine {
  const fail = () => Promise.reject(new MachineError('unreachable', why));
  return { survey: fail, write: fail, makeDirectory: fail, run: fail, close: async () => {} };
}
