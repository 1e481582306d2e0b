import { checkName } from '../model/names.ts';
import { withManaged } from '../model/state.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * Stops managing a module that is no longer assigned, without running its `stop` (for a
 * release whose stop keeps failing). It touches no machine: data, files and secrets stay
 * on the machine, and the secrets in the vault. Command line only; journaled as an act.
 */
export const forget: CommandFunction = async ({ node, module }, { store }) => {
  const refusal = checkName('module', module);
  if (refusal) return refuse('invalid_name', refusal);
  const record = await store.record();
  if (!Object.hasOwn(record.managed, module))
    return refuse(
      'not_managed',
      `berth does not manage ${module} on ${node}; there is nothing to forget`,
    );
  if (record.assigned.includes(module))
    return refuse(
      'still_assigned',
      `${node} is to run ${module}; berth forgets only what is no longer assigned: unassign it first (berth unassign ${node} ${module})`,
    );
  await store.saveRecord(withManaged(record, module, undefined));
  return { result: { command: 'forget', node, module } };
};
