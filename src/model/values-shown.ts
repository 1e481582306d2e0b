import type { ModuleDefinition } from './catalog.ts';
import { givenToNode } from './readings.ts';
import type { Settings } from './settings.ts';
import type { Value } from './value-type.ts';
import { article, typeOf, valueWords } from './values.ts';

/**
 * A value of a node as `berth nodes NODE` and the view show it: what it is and where it
 * came from — berth.json (`from` the key of `values` it is under: the node, a group or
 * `@all`), or the default of the module that reads it — and which of the modules the node
 * runs read it. A value a module needs that nothing gives has no `value`; one of the wrong
 * type has `problem`.
 */
export interface ValueShown {
  name: string;
  value?: Value;
  from: { values: string } | { default: string } | { none: true };
  readBy: string[];
  problem?: string;
}

/** Each value of a node, sorted by name: what berth.json gives it, and what its modules (`definitions`) declare. */
export function valuesShown(
  settings: Pick<Settings, 'values' | 'groups'>,
  node: string,
  definitions: ReadonlyMap<string, ModuleDefinition>,
): ValueShown[] {
  const given = givenToNode(settings, node);
  const shown = new Map<string, ValueShown>();
  for (const [name, item] of given)
    shown.set(name, { name, value: item.value, from: { values: item.from }, readBy: [] });
  for (const [module, definition] of [...definitions].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [name, spec] of Object.entries(definition.values)) {
      let item = shown.get(name);
      if (!item) {
        item =
          spec.default === undefined
            ? { name, from: { none: true }, readBy: [], problem: `${module} needs it` }
            : { name, value: spec.default, from: { default: module }, readBy: [] };
        shown.set(name, item);
      }
      item.readBy.push(module);
      if (item.value !== undefined && 'values' in item.from && typeOf(item.value) !== spec.type)
        item.problem = `${module} reads it as ${article(spec.type)}`;
    }
  }
  return [...shown.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** A value as a line of `berth nodes NODE`: `workers = 8 (berth.json values.@web)`. */
export function valueLine(item: ValueShown): string {
  const from =
    'values' in item.from
      ? `berth.json values.${item.from.values}`
      : 'default' in item.from
        ? `the default of ${item.from.default}`
        : 'not given';
  const value = item.value === undefined ? '' : ` = ${valueWords(item.value)}`;
  const readBy = item.readBy.length === 0 ? '; no module it runs reads it' : '';
  const problem = item.problem === undefined ? '' : `; ${item.problem}`;
  return `${item.name}${value} (${from}${readBy}${problem})`;
}
