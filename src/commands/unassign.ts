import { didYouMean } from '../did-you-mean.ts';
import { checkName } from '../names.ts';
import { withAssigned } from '../state.ts';
import { type CommandFunction, refuse } from './context.ts';

/** Drops an assignment. It touches no machine: the next converge releases the module. */
export const unassign: CommandFunction = async ({ node, module }, { store, catalog }) => {
  const refusal = checkName('module', module);
  if (refusal) return refuse(refusal);

  const record = await store.record();
  if (!record.assigned.includes(module))
    return refuse(
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
    said:
      module in record.managed
        ? `${node} is no longer to run ${module}; converge ${node} to release it (its data stays)`
        : `${node} is no longer to run ${module}`,
  };
};
