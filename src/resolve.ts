import type { Catalog, ModuleDefinition } from './catalog.ts';

export type Resolution =
  | { ok: true; definition: ModuleDefinition }
  | { ok: false; problem: string };

/**
 * Whether a module can run on a node: it is in the catalog and valid, and every
 * module it needs, all the way down, is assigned to the node too, with no cycle.
 */
export async function resolveModule(
  module: string,
  node: string,
  assigned: ReadonlySet<string>,
  catalog: Catalog,
): Promise<Resolution> {
  const visit = async (name: string, path: string[]): Promise<Resolution> => {
    if (path.includes(name)) {
      const cycle = [...path.slice(path.indexOf(name)), name].join(' → ');
      return { ok: false, problem: `its needs form a cycle: ${cycle}` };
    }
    const entry = await catalog.entry(name);
    if ('problem' in entry) return { ok: false, problem: entry.problem };
    for (const need of entry.definition.needs) {
      if (!assigned.has(need)) {
        return { ok: false, problem: `it needs ${need}, which ${node} is not assigned` };
      }
      const below = await visit(need, [...path, name]);
      if (!below.ok) {
        return {
          ok: false,
          problem: below.problem.startsWith('its needs form a cycle')
            ? below.problem
            : `it needs ${need}, which does not resolve: ${below.problem}`,
        };
      }
    }
    return { ok: true, definition: entry.definition };
  };
  return visit(module, []);
}

/** The refusal for a module that does not resolve, as assign and converge say it. */
export function doesNotResolve(module: string, problem: string) {
  return `${module} does not resolve: ${problem}`;
}
