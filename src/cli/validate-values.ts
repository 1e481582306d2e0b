import type { ModuleDefinition } from '../model/catalog.ts';
import { givenToNode } from '../model/readings.ts';
import type { Settings } from '../model/settings.ts';
import { resolveTarget } from '../model/targets.ts';
import { article, typeOf, valueWords } from '../model/values.ts';
import { didYouMean } from '../utils/did-you-mean.ts';

/** A problem of the values, in berth.json (`module` absent) or in a module's definition. */
export interface ValuesProblem {
  module?: string;
  problem: string;
}

/**
 * What `berth validate` finds of the values, across berth.json and the catalog: a value
 * berth.json gives that no module declares (did you mean the closest name one does?; said
 * only when every definition could be read, `allRead`),
 * one whose type a module that declares it does not read, and a value a module requires
 * that berth.json gives no node — or does not give a node its `run` declares the module on.
 */
export function valuesProblems(
  settings: Pick<Settings, 'values' | 'groups' | 'nodes' | 'run'>,
  definitions: ReadonlyMap<string, ModuleDefinition>,
  { allRead }: { allRead: boolean },
): ValuesProblem[] {
  const problems: ValuesProblem[] = [];
  const declaring = new Map<string, [string, ModuleDefinition][]>();
  for (const [module, definition] of definitions)
    for (const name of Object.keys(definition.values))
      declaring.set(name, [...(declaring.get(name) ?? []), [module, definition]]);
  for (const [key, values] of Object.entries(settings.values)) {
    for (const [name, value] of Object.entries(values)) {
      const readers = declaring.get(name);
      // A definition not valid may declare it: that one is said as such.
      if (!readers && allRead) {
        problems.push({
          problem: `values.${key}.${name}: no module of the catalog declares ${name}${didYouMean(name, declaring.keys())}`,
        });
        continue;
      }
      for (const [module, definition] of readers ?? []) {
        const type = definition.values[name]?.type;
        if (type !== undefined && typeOf(value) !== type)
          problems.push({
            problem: `values.${key}.${name}: ${valueWords(value)} is ${article(typeOf(value))}, but ${module} reads ${name} as ${article(type)}`,
          });
      }
    }
  }
  const given = new Set(Object.values(settings.values).flatMap((values) => Object.keys(values)));
  const inventory = { nodes: Object.keys(settings.nodes), groups: settings.groups };
  for (const [module, definition] of definitions) {
    for (const [name, spec] of Object.entries(definition.values)) {
      if (spec.default !== undefined) continue;
      if (!given.has(name)) {
        problems.push({
          module,
          problem: `values.${name} is required (it has no default), and berth.json gives it to no node`,
        });
        continue;
      }
      for (const [target, modules] of Object.entries(settings.run)) {
        if (!modules.includes(module)) continue;
        const targeted = resolveTarget(target, inventory);
        const without = (targeted.ok ? targeted.nodes : []).filter(
          (node) => !givenToNode(settings, node).has(name),
        );
        if (without.length > 0)
          problems.push({
            module,
            problem: `values.${name} is required (it has no default), and berth.json does not give it to ${without.join(', ')}, which run.${target} runs ${module} on`,
          });
      }
    }
  }
  return problems;
}
