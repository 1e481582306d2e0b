import { checkName } from '../names.ts';
import { doesNotResolve, resolveModule } from '../resolve.ts';
import { assignedTo, withAssignments } from '../state.ts';
import { type CommandFunction, checkNode, refuse } from './context.ts';

/**
 * Keeps "node is to run module". An assignment that does not resolve is still
 * kept, and both facts are said: the assignment, and why it does not resolve.
 */
export const assign: CommandFunction = async ({ node, module }, context) => {
  const refusal = checkNode(context, node) ?? checkName('module', module);
  if (refusal) return refuse(refusal);

  const { stores } = context;
  const assigned = assignedTo(stores.state(), node);
  let said: string;
  if (assigned.includes(module)) {
    said = `${node} is already to run ${module}; nothing changed`;
  } else {
    await stores.saveState(withAssignments(stores.state(), node, [...assigned, module]));
    said = `${node} is to run ${module}`;
  }
  const resolution = await resolveModule(
    module,
    node,
    new Set([...assigned, module]),
    stores.catalog,
  );
  if (!resolution.ok) return refuse(doesNotResolve(module, resolution.problem), said);
  return { said };
};
