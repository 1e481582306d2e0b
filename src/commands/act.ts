import { ConfigError } from '../config/config.ts';
import { type GrantedTarget, grantedTarget } from '../model/grants.ts';
import { isName } from '../model/names.ts';
import type { RefusalOf } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import type { Settings } from '../model/settings.ts';
import { type Inventory, readTarget } from '../model/targets.ts';
import { storesRefusal } from '../stores/stores.ts';
import type { ActDeps, Face, OpenedAct } from './act-shapes.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { refusedUnplaced } from './node-act.ts';
import { Runner } from './runner.ts';

/** The refusal for a request without the fields its command needs, or undefined. */
export function missingFields(
  command: Command,
  request: CommandRequest,
): RefusalOf<'fields-missing'> | undefined {
  const needsModule = command.needs.includes('module');
  if (request.node === '' || (needsModule && request.module === ''))
    return { kind: 'fields-missing', code: 'fields_missing', needsModule };
  return undefined;
}

/**
 * Where every request begins, from both faces, in docs/api.md's order after
 * authentication and decoding: required fields → open the stores → berth.json → the
 * target resolved to its nodes, once, as the face may name them (the grants, over the
 * API) → the runner. A node's name is a target of one. A target refused is journaled
 * apart from every node.
 */
export async function openAct(
  command: Command,
  request: CommandRequest,
  deps: ActDeps,
  face: Face,
): Promise<OpenedAct> {
  const missing = missingFields(command, request);
  if (missing) return { kind: 'missing', refusal: missing };

  const ready = (refusal: RefusalOf<'config'>): OpenedAct => ({
    kind: 'ready',
    run: async () => ({ refusal }),
  });
  let config: Awaited<ReturnType<ActDeps['loadConfig']>>;
  let inventory: Inventory;
  try {
    await deps.stores.open();
    // A node's name needs that node of the inventory alone; a group or a list, all of it.
    config = await deps.loadConfig(isName(request.node) ? [request.node] : undefined);
    inventory = await inventoryOf(command, config.settings, deps, face);
  } catch (error) {
    // The stores are chosen by berth.json: one that cannot be used is the operator's to mend.
    if (error instanceof ConfigError)
      return ready({ kind: 'config', code: 'invalid_config', message: error.message });
    return { kind: 'stores', refusal: storesRefusal(error) };
  }
  // The target read once on the inventory; over the API, then held to the subject's grants:
  // the whole target or nothing, and nothing said of nodes or groups it is not granted.
  const asked = readTarget(request.node, inventory);
  let targeted: GrantedTarget = asked.targeted;
  if (face.via === 'api')
    targeted = grantedTarget(config.settings, face.actor, command.name, asked);
  // A refresh is a preview's first step: on an act it would change what was approved.
  if (face.line.refresh && request.yes)
    return refusedUnplaced(command, request, deps, face, {
      kind: 'refresh-on-act',
      code: 'refresh_not_on_act',
      command: command.name,
      target: request.node,
    });
  if (!targeted.ok)
    return refusedUnplaced(command, request, deps, face, targeted.refusal, 'byGrants' in targeted);
  const runner = new Runner(command, request, targeted.nodes, config, deps, face);
  return { kind: 'ready', run: () => runner.run() };
}

/**
 * The inventory a request's target is read on: berth.json's. A command on the records
 * alone (`rekey`, the command line's) also reaches a node berth.json no longer names
 * while the stores keep its records.
 */
async function inventoryOf(
  command: Command,
  settings: Settings,
  deps: ActDeps,
  face: Face,
): Promise<Inventory> {
  const nodes = Object.keys(settings.nodes);
  if (command.recordsAlone && face.via !== 'api')
    for (const node of await deps.stores.listNodes())
      if (!Object.hasOwn(settings.nodes, node)) nodes.push(node);
  return { nodes, groups: settings.groups };
}
