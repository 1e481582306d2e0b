import * as v from 'valibot';
import type { ModuleDefinition } from '../model/catalog.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import type { NodeEntry } from '../model/settings.ts';
import { groupsHolding, resolveTarget } from '../model/targets.ts';
import { valuesShown } from '../model/values-shown.ts';
import type { AnswerFunction } from './command-shape.ts';
import { declaredFor, toRun } from './declared.ts';
import { RefusedSchema, refused, refusedFor } from './reading-answer.ts';

const ValueShownSchema = v.object({
  name: v.string(),
  value: v.optional(v.union([v.string(), v.number(), v.boolean()])),
  from: v.union([
    v.object({ values: v.string() }),
    v.object({ default: v.string() }),
    v.object({ none: v.literal(true) }),
  ]),
  readBy: v.array(v.string()),
  problem: v.optional(v.string()),
});

/** One node as `berth nodes` shows it. */
export const NodeShownSchema = v.object({
  node: v.string(),
  kind: v.picklist(['root', 'ssh']),
  /** The root directory, or the ssh destination (with its port when not 22). */
  address: v.string(),
  sudo: v.boolean(),
  groups: v.array(v.string()),
  /** What it is to run: what was assigned and what berth.json's `run` declares, sorted. */
  run: v.array(v.string()),
  assigned: v.array(v.string()),
  /** What berth.json's `run` declares for it, each with the targets that declare it. */
  declared: v.array(v.object({ module: v.string(), from: v.array(v.string()) })),
  /** Its values, each with where it came from and the modules it runs that read it. */
  values: v.array(ValueShownSchema),
});
export type NodeShown = v.InferOutput<typeof NodeShownSchema>;

export const NodesAnswerSchema = v.union([
  RefusedSchema,
  v.object({ format_version: v.literal(FORMAT_VERSION), nodes: v.array(NodeShownSchema) }),
]);
export type NodesAnswer = v.InferOutput<typeof NodesAnswerSchema>;

/**
 * `berth nodes [target]`: the inventory, or the nodes of a target (`@web,!web3`), each
 * with its values and where each came from.
 */
export const nodes: AnswerFunction<NodesAnswer> = async ({ words }, deps) => {
  const [target] = words;
  try {
    await deps.stores.open();
    const { settings, catalog } = await deps.loadConfig();
    const inventory = { nodes: Object.keys(settings.nodes), groups: settings.groups };
    let names = inventory.nodes.sort();
    if (target !== undefined) {
      const targeted = resolveTarget(target, inventory);
      if (!targeted.ok) return refused(targeted.refusal);
      names = targeted.nodes;
    }
    const groupsOf = groupsHolding(settings.groups);
    const shown: NodeShown[] = [];
    for (const node of names) {
      const { assigned } = await deps.stores.readNode(node);
      const declared = declaredFor(settings, node);
      const run = toRun(assigned, declared);
      const definitions = new Map<string, ModuleDefinition>();
      for (const module of run) {
        const entry = await catalog.entry(module);
        if ('definition' in entry) definitions.set(module, entry.definition);
      }
      shown.push({
        node,
        ...where(settings.nodes[node] as NodeEntry),
        groups: groupsOf.get(node) ?? [],
        run,
        assigned,
        declared,
        values: valuesShown(settings, node, definitions),
      });
    }
    return { format_version: FORMAT_VERSION, nodes: shown };
  } catch (error) {
    return refusedFor(error);
  } finally {
    await deps.stores.close().catch(() => {});
  }
};

function where(entry: NodeEntry): Pick<NodeShown, 'kind' | 'address' | 'sudo'> {
  if ('root' in entry) return { kind: 'root', address: entry.root, sudo: false };
  const port = entry.port === undefined || entry.port === 22 ? '' : ` port ${entry.port}`;
  return { kind: 'ssh', address: `${entry.ssh}${port}`, sudo: entry.sudo === true };
}
