import { isName } from '../model/names.ts';
import { withManaged } from '../model/state.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * Stops managing a module that is no longer assigned, without running its `stop` (for a
 * release whose stop keeps failing). It touches no machine: data, files and secrets stay
 * on the machine, and the secrets in the vault. Command line only; journaled as an act.
 */
export const forget: CommandFunction = async ({ node, module }, { store }) => {
  if (!isName(module))
    return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: module });
  const record = await store.record();
  if (!Object.hasOwn(record.managed, module))
    return refuse({ kind: 'not-managed', code: 'not_managed', module, node });
  if (record.assigned.includes(module))
    return refuse({ kind: 'still-assigned', code: 'still_assigned', module, node });
  await store.saveRecord(withManaged(record, module, undefined));
  return { result: { command: 'forget', node, module } };
};
