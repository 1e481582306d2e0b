import { isName } from '../model/names.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * `berth secret <node> <module> <name>`: hands a kept value to `reveal` (the command
 * line prints it) for an operator to give an application. `said`, which the journal
 * keeps, says who read what, never the value.
 */
export function readSecret(name: string, reveal: (value: Uint8Array) => void): CommandFunction {
  return async ({ node, module }, { store, actor }) => {
    if (!isName(module))
      return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: module });
    if (name === '' || name.includes('/'))
      return refuse({ kind: 'secret-name', code: 'invalid_name', given: name });
    const kept = await store.vault.get(module, name);
    if (!kept)
      return refuse({
        kind: 'secret-not-kept',
        code: 'secret_not_kept',
        secret: name,
        module,
        node,
      });
    reveal(kept.value);
    return { result: { command: 'secret', node, module, secret: name, actor } };
  };
}
