import { checkName } from '../model/names.ts';
import { catalogHint, doesNotResolve, loadEntries, resolveModule } from '../model/resolve.ts';
import { withAssigned } from '../model/state.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * Keeps "node is to run module". An assignment that does not resolve is still
 * kept, and both facts are said: the assignment, and why it does not resolve.
 */
export const assign: CommandFunction = async ({ node, module }, { store, catalog }) => {
  const refusal = checkName('module', module);
  if (refusal) return refuse('invalid_name', refusal);

  const record = await store.record();
  const already = record.assigned.includes(module);
  if (!already) await store.saveRecord(withAssigned(record, [...record.assigned, module]));
  const result = { command: 'assign', node, module, already } as const;
  const assigned = new Set([...record.assigned, module]);
  const resolution = resolveModule(module, assigned, await loadEntries(catalog, [module]));
  if (!resolution.ok) {
    // Kept all the same (a module may be added to the catalog later), with a hint at a typo.
    const hint = await catalogHint(resolution.unresolved, module, catalog);
    return {
      result,
      code: 'does_not_resolve',
      error: `${doesNotResolve(module, node, resolution.unresolved)}${hint}`,
    };
  }
  return { result };
};
