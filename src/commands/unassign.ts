import { checkName } from '../names.ts';
import { assignedTo, managedOn, withAssignments } from '../state.ts';
import { type CommandFunction, checkNode, refuse } from './context.ts';

/** Drops an assignment. It touches no machine: the next converge releases the module. */
export const unassign: CommandFunction = async ({ node, module }, context) => {
  const refusal = checkNode(context, node) ?? checkName('module', module);
  if (refusal) return refuse(refusal);

  const { stores } = context;
  const assigned = assignedTo(stores.state(), node);
  if (!assigned.includes(module))
    return refuse(`${node} is not to run ${module}; there is nothing to unassign`);

  const neededBy: string[] = [];
  for (const other of assigned) {
    if (other === module) continue;
    const entry = await stores.catalog.entry(other);
    if ('definition' in entry && entry.definition.needs.includes(module)) neededBy.push(other);
  }
  if (neededBy.length > 0) {
    return refuse(
      `${module} is needed by ${neededBy.join(' and ')}, which ${node} is to run; unassign ${neededBy[0]} first`,
    );
  }

  await stores.saveState(
    withAssignments(
      stores.state(),
      node,
      assigned.filter((name) => name !== module),
    ),
  );
  const managed = module in managedOn(stores.state(), node);
  return {
    said: managed
      ? `${node} is no longer to run ${module}; converge ${node} to release it (its data stays)`
      : `${node} is no longer to run ${module}`,
  };
};
