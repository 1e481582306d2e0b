import { isName } from '../model/names.ts';
import { withAssigned } from '../model/state.ts';
import { closest } from '../utils/did-you-mean.ts';
import { type CommandFunction, refuse } from './context.ts';
import { declaredFor } from './declared.ts';

/** Drops an assignment. It touches no machine: the next converge releases the module. */
export const unassign: CommandFunction = async ({ node, module }, { store, catalog, settings }) => {
  if (!isName(module))
    return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: module });
  // Declared in berth.json, it stays desired whatever is unassigned: berth.json is where it goes.
  const declared = declaredFor(settings, node).find((item) => item.module === module);
  if (declared)
    return refuse({
      kind: 'declared-in-config',
      code: 'declared_in_config',
      module,
      node,
      from: [...declared.from],
    });

  const record = await store.record();
  if (!record.assigned.includes(module)) {
    const meant = closest(module, record.assigned);
    return refuse({
      kind: 'not-assigned',
      code: 'not_assigned',
      module,
      node,
      ...(meant === undefined ? {} : { meant }),
    });
  }

  const neededBy: string[] = [];
  for (const other of record.assigned) {
    if (other === module) continue;
    const entry = await catalog.entry(other);
    if ('definition' in entry && entry.definition.needs.includes(module)) neededBy.push(other);
  }
  if (neededBy.length > 0) {
    return refuse({ kind: 'still-needed', code: 'still_needed', module, node, neededBy });
  }

  await store.saveRecord(
    withAssigned(
      record,
      record.assigned.filter((name) => name !== module),
    ),
  );
  return {
    result: { command: 'unassign', node, module, managed: Object.hasOwn(record.managed, module) },
  };
};
