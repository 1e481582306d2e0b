import { MachineError } from '../machines/machine.ts';
import type { ModuleDefinition } from '../model/catalog.ts';
import { loadEntries } from '../model/resolve.ts';
import { type CommandFunction, refuse } from './context.ts';
import { gatherReadings } from './gather-readings.ts';
import { runCheck } from './steps/check.ts';
import type { CheckOutcome } from './steps/step.ts';

/** Each managed module's check by name: null for a module whose definition has none. */
export type ChecksNow = Record<string, CheckOutcome | null>;

/**
 * `berth status TARGET --check`: runs the check of every module berth manages on the
 * node, as it is now, under the node's lock like a preview (so the vault's values can
 * clear its output of secrets), and hands them to `seen`. It changes nothing. Each check
 * sees its module's values and the node's facts, asked of the machine first.
 */
export function checkNow(seen: (node: string, checks: ChecksNow) => void): CommandFunction {
  return async ({ node }, context) => {
    const record = await context.store.record();
    const modules = Object.keys(record.managed).sort();
    const entries = await loadEntries(context.catalog, modules);
    const secrets = await context.store.vault.all();
    const checks: ChecksNow = {};
    const checked = new Map<string, ModuleDefinition>();
    for (const module of modules) {
      const entry = entries.get(module);
      if (entry && 'definition' in entry && entry.definition.check)
        checked.set(module, entry.definition);
    }
    try {
      const told =
        checked.size > 0
          ? (await context.machine.survey([], undefined, undefined, { facts: true })).facts
          : undefined;
      const { readings } = await gatherReadings(
        context.settings,
        node,
        context.catalog,
        checked,
        told,
      );
      for (const module of modules) {
        const definition = checked.get(module);
        checks[module] = definition?.check
          ? await runCheck(
              node,
              module,
              { script: definition.check, timeout: definition.timeout },
              secrets,
              context,
              readings,
            )
          : null;
      }
    } catch (error) {
      if (!(error instanceof MachineError)) throw error;
      const code = error.failure === 'unreachable' ? 'unreachable' : 'hook_failed';
      return refuse({ kind: 'check-not-run', code, message: error.message });
    }
    seen(node, checks);
    return {};
  };
}
