import { checkName } from '../model/names.ts';
import { withAssigned } from '../model/state.ts';
import { didYouMean } from '../utils/did-you-mean.ts';
import { type CommandFunction, refuse } from './context.ts';
import { declaredFor } from './declared.ts';

/** Drops an assignment. It touches no machine: the next converge releases the module. */
export const unassign: CommandFunction = async ({ node, module }, { store, catalog, settings }) => {
  const refusal = checkName('module', module);
  if (refusal) return refuse('invalid_name', refusal);
  // Declared in berth.json, it stays desired whatever is unassigned: berth.json is where it goes.
  const declared = declaredFor(settings, node).find((item) => item.module === module);
  if (declared)
    return refuse(
      'declared_in_config',
      `${node} is to run ${module} because berth.json declares it (run.${declared.from.join(', run.')}); remove it there to stop running it`,
    );

  const record = await store.record();
  if (!record.assigned.includes(module))
    return refuse(
      'not_assigned',
      `${node} is not to run ${module}; there is nothing to unassign${didYouMean(module, record.assigned)}`,
    );

  const neededBy: string[] = [];
  for (const other of record.assigned) {
    if (other === module) continue;
    const entry = await catalog.entry(other);
    if ('definition' in entry && entry.definition.needs.includes(module)) neededBy.push(other);
  }
  if (neededBy.length > 0) {
    return refuse(
      'still_needed',
      `${module} is needed by ${neededBy.join(' and ')}, which ${node} is to run; unassign ${neededBy[0]} first`,
    );
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
