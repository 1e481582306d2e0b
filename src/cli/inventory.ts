import type { ModuleDefinition } from '../catalog.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { type Declared, declaredFor, toRun } from '../declared.ts';
import { enveloped } from '../result.ts';
import type { NodeEntry } from '../settings.ts';
import { groupsHolding, resolveTarget } from '../targets.ts';
import { type ValueShown, valueLine, valuesShown } from '../values-shown.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io } from './io.ts';
import { readingFailed } from './reading-failed.ts';
import { toRunWords } from './to-run-words.ts';

/** One node as `berth nodes` shows it; `--json` prints these as they are. */
export interface NodeShown {
  node: string;
  kind: 'root' | 'ssh';
  /** The root directory, or the ssh destination (with its port when not 22). */
  address: string;
  sudo: boolean;
  groups: string[];
  /** What it is to run: what was assigned and what berth.json's `run` declares, sorted. */
  run: string[];
  /** What was assigned to it. */
  assigned: string[];
  /** What berth.json's `run` declares for it, each with the targets that declare it. */
  declared: Declared[];
  /** Its values, each with where it came from and the modules it runs that read it. */
  values: ValueShown[];
}

/**
 * `berth nodes [target]`: the inventory, a node a line, or the nodes of a target
 * (`@web,!web3`), each with its values and where each came from.
 */
export async function showNodes(
  target: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  const deps = stateDeps(location, io.env);
  try {
    await deps.stores.open();
    const { settings, catalog } = await deps.loadConfig();
    const inventory = { nodes: Object.keys(settings.nodes), groups: settings.groups };
    let names = inventory.nodes.sort();
    if (target !== undefined) {
      const targeted = resolveTarget(target, inventory);
      if (!targeted.ok) {
        if (json)
          io.out(JSON.stringify(enveloped({ refused: targeted.refused, code: targeted.code })));
        else io.err(targeted.refused);
        return EXIT.refused;
      }
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
    if (json) {
      io.out(JSON.stringify(enveloped({ nodes: shown })));
      return EXIT.done;
    }
    if (shown.length === 0) {
      io.out('no node yet: add one under nodes in berth.json');
      return EXIT.done;
    }
    // Named, a node or a target shows its values too, a line each under it.
    io.out(
      shown
        .map((item) =>
          [
            [
              item.node,
              `${item.kind} ${item.address}${item.sudo ? ' (sudo)' : ''}`,
              item.groups.length ? `groups ${item.groups.join(', ')}` : '',
              `to run: ${toRunWords(item.assigned, item.declared)}`,
            ]
              .filter(Boolean)
              .join('  '),
            ...(target === undefined ? [] : item.values.map((value) => `  ${valueLine(value)}`)),
          ].join('\n'),
        )
        .join('\n'),
    );
    return EXIT.done;
  } catch (error) {
    return readingFailed(error, io);
  } finally {
    await deps.stores.close().catch(() => {});
  }
}

function where(entry: NodeEntry): Pick<NodeShown, 'kind' | 'address' | 'sudo'> {
  if ('root' in entry) return { kind: 'root', address: entry.root, sudo: false };
  const port = entry.port === undefined || entry.port === 22 ? '' : ` port ${entry.port}`;
  return { kind: 'ssh', address: `${entry.ssh}${port}`, sudo: entry.sudo === true };
}
