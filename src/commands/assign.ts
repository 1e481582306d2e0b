import { isName } from '../model/names.ts';
import { catalogMeant, loadEntries, resolveModule } from '../model/resolve.ts';
import { withAssigned } from '../model/state.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * Keeps "node is to run module". An assignment that does not resolve is still
 * kept, and both facts are said: the assignment, and why it does not resolve.
 */
export const assign: CommandFunction = async ({ node, module }, { store, catalog }) => {
  if (!isName(module))
    return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: module });

  const record = await store.record();
  const already = record.assigned.includes(module);
  if (!already) await store.saveRecord(withAssigned(record, [...record.assigned, module]));
  const result = { command: 'assign', node, module, already } as const;
  const assigned = new Set([...record.assigned, module]);
  const resolution = resolveModule(module, assigned, await loadEntries(catalog, [module]));
  if (!resolution.ok) {
    // Kept all the same (a module may be added to the catalog later), with a hint at a typo.
    const meant = await catalogMeant(resolution.unresolved, module, catalog);
    const { unresolved } = resolution;
    return {
      result,
      refusal: {
        kind: 'does-not-resolve',
        code: 'does_not_resolve',
        module,
        node,
        unresolved,
        ...(meant === undefined ? {} : { meant }),
      },
    };
  }
  return { result };
};
