import { closest } from '../utils/did-you-mean.ts';
import type { Catalog, CatalogEntry, ModuleDefinition } from './catalog.ts';
import type { Unresolved } from './unresolved.ts';

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
    if ('definition' in entry) for (const need of entry.definition.needs) pending.push(need);
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
  return moduleResolver(assigned, entries)(module);
}

/**
 * Resolves modules on one node's assignments, each module's needs walked once for them
 * all: depth first, by a stack of its own rather than the call stack, so that no chain
 * of needs is too deep and a catalog of long chains costs its size, not its square. A
 * module's resolution is kept unless a cycle ended it: which module a cycle is said from
 * depends on where the walk entered it.
 */
export function moduleResolver(
  assigned: ReadonlySet<string>,
  entries: Entries,
): (module: string) => Resolution {
  const known = new Map<string, Resolution>();
  /** The reason a module does not resolve that is its own (not a need's below it), if any. */
  const ownReason = (name: string): Resolution | undefined => {
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
    return undefined;
  };
  /** A module's resolution when its need `need` resolved as `below` did not. */
  const through = (need: string, below: Unresolved): Resolution => {
    if (below.why === 'cycle') return { ok: false, unresolved: below };
    if (below.why === 'need-does-not-resolve')
      return { ok: false, unresolved: { ...below, need, depth: below.depth + 1 } };
    return {
      ok: false,
      unresolved: { why: 'need-does-not-resolve', need, at: need, depth: 1, below },
    };
  };
  return (module) => {
    const kept = known.get(module);
    if (kept) return kept;
    const first = ownReason(module);
    if (first) return first;
    type Frame = { name: string; definition: ModuleDefinition; next: number };
    const definitionOf = (name: string) =>
      (entries.get(name) as { definition: ModuleDefinition }).definition;
    const path: Frame[] = [{ name: module, definition: definitionOf(module), next: 0 }];
    const walking = new Set([module]);
    /** The resolution of the frame on top, once known: it is popped, and its parent told. */
    let done: Resolution | undefined;
    while (path.length > 0) {
      const top = path[path.length - 1] as Frame;
      if (done === undefined) {
        const need = top.definition.needs[top.next];
        if (need === undefined) {
          done = { ok: true, definition: top.definition };
        } else {
          const needed = entries.get(need);
          if (!needed || ('problem' in needed && needed.missing))
            done = { ok: false, unresolved: { why: 'need-not-in-catalog', need } };
          else if (!assigned.has(need))
            done = { ok: false, unresolved: { why: 'need-not-assigned', need } };
          else if (walking.has(need)) {
            const names = path.map((frame) => frame.name);
            done = {
              ok: false,
              unresolved: { why: 'cycle', cycle: [...names.slice(names.indexOf(need)), need] },
            };
          } else {
            const below = known.get(need) ?? ownReason(need);
            if (below === undefined) {
              path.push({ name: need, definition: definitionOf(need), next: 0 });
              walking.add(need);
              continue;
            }
            if (below.ok) top.next++;
            else done = through(need, below.unresolved);
          }
          if (done === undefined) continue;
        }
      }
      // The top frame's resolution is known: keep it, and hand it to the frame below.
      path.pop();
      walking.delete(top.name);
      if (done.ok || done.unresolved.why !== 'cycle') known.set(top.name, done);
      const parent = path[path.length - 1];
      if (!parent) return done;
      if (done.ok) {
        parent.next++;
        done = undefined;
      } else done = through(top.name, done.unresolved);
    }
    return done as Resolution;
  };
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
    case 'need-does-not-resolve': {
      const { need, at, depth, below } = unresolved;
      const reason = describeUnresolved(node, below);
      if (depth === 1) return `it needs ${need}, which does not resolve: ${reason}`;
      const where =
        depth === 2
          ? `a need of ${need}`
          : `${(depth - 1).toLocaleString('en-US')} needs down from ${need}`;
      return `it needs ${need}, which does not resolve: ${at} (${where}) does not resolve: ${reason}`;
    }
    case 'cycle':
      return `its needs form a cycle: ${unresolved.cycle.join(' → ')}`;
  }
}

/** The refusal for a module that does not resolve, as assign and converge say it. */
export function doesNotResolve(module: string, node: string, unresolved: Unresolved) {
  return `${module} does not resolve: ${describeUnresolved(node, unresolved)}`;
}

/**
 * The name of the catalog a module (or a need) not in it is close to, if any: what was
 * meant. Read only when something is missing.
 */
export async function catalogMeant(unresolved: Unresolved, module: string, catalog: Catalog) {
  const missing =
    unresolved.why === 'not-in-catalog'
      ? module
      : unresolved.why === 'need-not-in-catalog'
        ? unresolved.need
        : undefined;
  if (missing === undefined) return undefined;
  return closest(missing, await catalog.names());
}

/** `; did you mean gitea?` when `catalogMeant` finds what was meant; nothing otherwise. */
export async function catalogHint(unresolved: Unresolved, module: string, catalog: Catalog) {
  const meant = await catalogMeant(unresolved, module, catalog);
  return meant === undefined ? '' : `; did you mean ${meant}?`;
}
