import type { Catalog, CatalogEntry, ModuleDefinition } from './catalog.ts';
import { didYouMean } from './did-you-mean.ts';

/** Why a module does not resolve on a node, as a value: the words are made from it. */
export type Unresolved =
  | { why: 'not-in-catalog'; problem: string }
  | { why: 'not-valid'; problem: string }
  | { why: 'need-not-in-catalog'; need: string }
  | { why: 'need-not-assigned'; need: string }
  | { why: 'need-does-not-resolve'; need: string; below: Unresolved }
  | { why: 'cycle'; cycle: string[] };

export type Resolution =
  | { ok: true; definition: ModuleDefinition }
  | { ok: false; unresolved: Unresolved };

/** Catalog entries by name, loaded before planning so that planning needs no I/O. */
export type Entries = ReadonlyMap<string, CatalogEntry>;

/** Loads the entries of `modules` and of everything they need, all the way down. */
export async function loadEntries(catalog: Catalog, modules: Iterable<string>): Promise<Entries> {
  const entries = new Map<string, CatalogEntry>();
  const pending = [...modules];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (entries.has(name)) continue;
    const entry = await catalog.entry(name);
    entries.set(name, entry);
    if ('definition' in entry) pending.push(...entry.definition.needs);
  }
  return entries;
}

/**
 * Whether a module can run on a node: it is in the catalog and valid, and every module
 * it needs, all the way down, is in the catalog and assigned to the node too, with no
 * cycle. `entries` must hold the module and its needs (see `loadEntries`).
 */
export function resolveModule(
  module: string,
  assigned: ReadonlySet<string>,
  entries: Entries,
): Resolution {
  const visit = (name: string, path: string[]): Resolution => {
    if (path.includes(name))
      return {
        ok: false,
        unresolved: { why: 'cycle', cycle: [...path.slice(path.indexOf(name)), name] },
      };
    const entry = entries.get(name);
    if (!entry)
      return {
        ok: false,
        unresolved: { why: 'not-in-catalog', problem: 'it is not in the catalog' },
      };
    if ('problem' in entry && entry.missing)
      return { ok: false, unresolved: { why: 'not-in-catalog', problem: entry.problem } };
    if ('problem' in entry)
      return { ok: false, unresolved: { why: 'not-valid', problem: entry.problem } };
    for (const need of entry.definition.needs) {
      const needed = entries.get(need);
      if (!needed || ('problem' in needed && needed.missing))
        return { ok: false, unresolved: { why: 'need-not-in-catalog', need } };
      if (!assigned.has(need)) return { ok: false, unresolved: { why: 'need-not-assigned', need } };
      const below = visit(need, [...path, name]);
      if (!below.ok) {
        return {
          ok: false,
          unresolved:
            below.unresolved.why === 'cycle'
              ? below.unresolved
              : { why: 'need-does-not-resolve', need, below: below.unresolved },
        };
      }
    }
    return { ok: true, definition: entry.definition };
  };
  return visit(module, []);
}

/** Why a module does not resolve, in words. */
export function describeUnresolved(node: string, unresolved: Unresolved): string {
  switch (unresolved.why) {
    case 'not-in-catalog':
    case 'not-valid':
      return unresolved.problem;
    case 'need-not-in-catalog':
      return `it needs ${unresolved.need}, which is not in the catalog`;
    case 'need-not-assigned':
      return `it needs ${unresolved.need}, which ${node} is not assigned`;
    case 'need-does-not-resolve':
      return `it needs ${unresolved.need}, which does not resolve: ${describeUnresolved(node, unresolved.below)}`;
    case 'cycle':
      return `its needs form a cycle: ${unresolved.cycle.join(' → ')}`;
  }
}

/** The refusal for a module that does not resolve, as assign and converge say it. */
export function doesNotResolve(module: string, node: string, unresolved: Unresolved) {
  return `${module} does not resolve: ${describeUnresolved(node, unresolved)}`;
}

/**
 * `; did you mean gitea?` when a module (or a need) is not in the catalog and a name of
 * the catalog is close to it; nothing otherwise. Read only when something is missing.
 */
export async function catalogHint(unresolved: Unresolved, module: string, catalog: Catalog) {
  const missing =
    unresolved.why === 'not-in-catalog'
      ? module
      : unresolved.why === 'need-not-in-catalog'
        ? unresolved.need
        : undefined;
  if (missing === undefined) return '';
  return didYouMean(missing, await catalog.names());
}
