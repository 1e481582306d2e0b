import type { ActDeps } from '../commands/act.ts';
import { fileConfig } from '../config/file-config.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { machinesOf } from '../machines/machines-of.ts';
import { fileStores } from '../stores/file-store.ts';

/**
 * What the act runner is given on this machine, by both faces: berth.json and the
 * catalog from the state directory, its stores, and machines picked from the inventory.
 */
export function fileDeps(location: StateLocation): ActDeps {
  return {
    loadConfig: fileConfig(location.dir),
    stores: fileStores(location),
    machines: machinesOf,
  };
}
