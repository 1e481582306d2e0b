import type { Catalog, ModuleDefinition } from '../model/catalog.ts';
import { type FactName, isFactName, type MachineFacts } from '../model/facts.ts';
import { factsOf, givenToNode, type Readings } from '../model/readings.ts';
import type { Settings } from '../model/settings.ts';
import { readsOf } from '../model/template.ts';
import type { Value } from '../model/value-type.ts';
import { type Given, moduleValues, type ValueProblem } from '../model/values.ts';
import { closest } from '../utils/did-you-mean.ts';

/** What stands in the way of a module's values or facts on a node, as a value. */
export type ReadingBlocker =
  | ValueProblem
  /** A template of the module reads a fact the node's machine did not tell. */
  | { because: 'fact-unknown'; module: string; path: string; fact: FactName }
  /** berth.json gives the node a value no module of the catalog declares. */
  | { because: 'value-undeclared'; value: string; given: Given; meant?: string };

/** A node's readings for a plan, and what stands in the way of them: by module, and the node's own. */
export interface GatheredReadings {
  readings: Readings;
  blockers: ReadonlyMap<string, ReadingBlocker[]>;
  undeclared: ReadingBlocker[];
}

/**
 * Whether a definition's plan needs the node's facts: a template reads one, a hook sees
 * them all, or the issuer it provides reads one (kept with the node's newest survey, for
 * `berth api --issuer MODULE@NODE` when the node cannot be reached).
 */
export function needsFacts(definition: ModuleDefinition): boolean {
  return (
    readsOf(definition.provides?.issuer ?? '').fact.size > 0 ||
    definition.setup !== undefined ||
    definition.start !== undefined ||
    definition.stop !== undefined ||
    definition.reload !== undefined ||
    definition.check !== undefined ||
    templatesOf(definition).some(([, text]) => readsOf(text).fact.size > 0)
  );
}

/**
 * Every template of a definition a plan renders for a node, by where it stands: its files'
 * texts, and its `tls` secrets' names (`secrets.tls.names`).
 */
export function templatesOf(definition: ModuleDefinition): [where: string, text: string][] {
  return [
    ...Object.entries(definition.files).map(([path, file]): [string, string] => [
      path,
      file.content,
    ]),
    ...Object.entries(definition.secrets).flatMap(([name, secret]) =>
      (secret.names ?? []).map((text): [string, string] => [`secrets.${name}.names`, text]),
    ),
  ];
}

/**
 * What a node's modules read besides secrets, gathered once for a plan: each module's
 * values (berth.json's, else its defaults), the node's facts (`told` by its survey), and
 * what stands in the way, by module: a value required and not given, or given of another
 * type; a fact a template reads that the machine did not tell. `undeclared` is what
 * berth.json gives the node that no module of the catalog declares (the catalog is read
 * whole only when the modules in hand do not declare all of it; while one of its
 * definitions cannot be read, no value is said to be undeclared).
 */
export async function gatherReadings(
  settings: Pick<Settings, 'values' | 'groups' | 'nodes'>,
  node: string,
  catalog: Catalog,
  definitions: ReadonlyMap<string, ModuleDefinition>,
  told: MachineFacts | undefined,
): Promise<GatheredReadings> {
  const given = givenToNode(settings, node);
  const facts = told === undefined ? {} : factsOf(settings, node, told);
  const values = new Map<string, Record<string, Value>>();
  const blockers = new Map<string, ReadingBlocker[]>();
  for (const [module, definition] of definitions) {
    const read = moduleValues(module, definition.values, given);
    values.set(module, read.values);
    const unknown: ReadingBlocker[] = [];
    const said = new Set<string>();
    for (const [path, text] of templatesOf(definition))
      for (const fact of readsOf(text).fact)
        if (isFactName(fact) && facts[fact] === undefined && !said.has(`${path} ${fact}`)) {
          said.add(`${path} ${fact}`);
          unknown.push({ because: 'fact-unknown', module, path, fact });
        }
    if (read.problems.length + unknown.length > 0)
      blockers.set(module, [...read.problems, ...unknown]);
  }
  return {
    readings: { facts, values },
    blockers,
    undeclared: await undeclaredGiven(given, catalog, definitions),
  };
}

/** The values berth.json gives a node that no definition of the catalog declares. */
async function undeclaredGiven(
  given: ReadonlyMap<string, Given>,
  catalog: Catalog,
  inHand: ReadonlyMap<string, ModuleDefinition>,
): Promise<ReadingBlocker[]> {
  const declared = new Set<string>();
  for (const definition of inHand.values())
    for (const name of Object.keys(definition.values)) declared.add(name);
  if ([...given.keys()].every((name) => declared.has(name))) return [];
  for (const module of await catalog.names()) {
    const entry = await catalog.entry(module);
    // A definition that cannot be read may declare it: berth cannot say that none does.
    if (!('definition' in entry)) return [];
    for (const name of Object.keys(entry.definition.values)) declared.add(name);
  }
  return [...given]
    .filter(([name]) => !declared.has(name))
    .map(([value, item]): ReadingBlocker => {
      const meant = closest(value, declared);
      return { because: 'value-undeclared', value, given: item, ...(meant ? { meant } : {}) };
    });
}
