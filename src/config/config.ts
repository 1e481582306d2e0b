import type { Catalog } from '../model/catalog.ts';
import type { Settings } from '../model/settings.ts';

/**
 * What an operator writes by hand and berth only reads: berth.json (the inventory, where
 * the catalog is, the flip window, the store) and the catalog. They stay files whatever
 * the store, so that teams keep them in version control.
 */
export interface Config {
  settings: Settings;
  catalog: Catalog;
}

/** berth.json cannot be used, in the operator's words: the command is refused (exit 1, 409). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration. `nodes` names the inventory entries the caller needs (none
 * for `[]`): the settings' `nodes` then holds at least those of them that are in the
 * inventory, and may hold no others, so that one node's act never reads 100,000. Without
 * `nodes`, the whole inventory.
 */
export type LoadConfig = (nodes?: readonly string[]) => Promise<Config>;
