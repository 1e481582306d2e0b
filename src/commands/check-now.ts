import { MachineError } from '../machines/machine.ts';
import { loadEntries } from '../resolve.ts';
import { type CommandFunction, refuse } from './context.ts';
import { runCheck } from './steps/check.ts';
import type { CheckOutcome } from './steps/step.ts';

/** Each managed module's check by name: null for a module whose definition has none. */
export type ChecksNow = Record<string, CheckOutcome | null>;

/**
 * `berth status TARGET --check`: runs the check of every module berth manages on the
 * node, as it is now, under the node's lock like a preview (so the vault's values can
 * clear its output of secrets), and hands them to `seen`. It changes nothing.
 */
export function checkNow(seen: (node: string, checks: ChecksNow) => void): CommandFunction {
  return async ({ node }, context) => {
    const record = await context.store.record();
    const modules = Object.keys(record.managed).sort();
    const entries = await loadEntries(context.catalog, modules);
    const secrets = await context.store.vault.all();
    const checks: ChecksNow = {};
    try {
      for (const module of modules) {
        const entry = entries.get(module);
        const definition = entry && 'definition' in entry ? entry.definition : undefined;
        const script = definition?.check;
        const hook = { script: script ?? '', timeout: definition?.timeout };
        checks[module] = script ? await runCheck(node, module, hook, secrets, context) : null;
      }
    } catch (error) {
      if (!(error instanceof MachineError)) throw error;
      const code = error.failure === 'unreachable' ? 'unreachable' : 'hook_failed';
      return refuse(code, `a check could not be run: ${error.message}`);
    }
    seen(node, checks);
    return {};
  };
}
