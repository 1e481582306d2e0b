import { checkName } from '../model/names.ts';
import { type CommandFunction, refuse } from './context.ts';

/**
 * `berth secret <node> <module> <name>`: hands a kept value to `reveal` (the command
 * line prints it) for an operator to give an application. `said`, which the journal
 * keeps, says who read what, never the value.
 */
export function readSecret(name: string, reveal: (value: Uint8Array) => void): CommandFunction {
  return async ({ node, module }, { store, actor }) => {
    const refusal = checkName('module', module);
    if (refusal) return refuse('invalid_name', refusal);
    if (name === '' || name.includes('/'))
      return refuse('invalid_name', `${JSON.stringify(name)} is not a secret name`);
    const kept = await store.vault.get(module, name);
    if (!kept)
      return refuse(
        'secret_not_kept',
        `the vault keeps no secret ${name} of ${module} for ${node}`,
      );
    reveal(kept.value);
    return { result: { command: 'secret', node, module, secret: name, actor } };
  };
}
