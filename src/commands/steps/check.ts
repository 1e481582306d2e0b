import { hookEnv, type Readings } from '../../readings.ts';
import type { KeptValue } from '../../secrets.ts';
import type { CommandContext } from '../context.ts';
import { runClearedHook } from './cleared-hook.ts';
import type { CheckOutcome, CoveredCheck } from './step.ts';

/**
 * One module's `check`, as an outcome: its exit and its last line, cleared of secrets.
 * Take and converge previews plan on it; `status --check` shows it. The module's values
 * and the node's facts (`readings`) are in its environment.
 */
export async function runCheck(
  node: string,
  module: string,
  script: string,
  secrets: readonly KeptValue[],
  context: Pick<CommandContext, 'machine' | 'signal'>,
  readings?: Readings,
): Promise<CheckOutcome> {
  const result = await runClearedHook(context, script, hookEnv(node, module, readings), secrets);
  return { code: result.code, last: result.shown.split('\n').at(-1) ?? '' };
}

/**
 * What a digest covers of a check: its exit status (whether it passes, and how it fails),
 * which is what the act depends on. Its words are not: they may vary from run to run (a
 * time, a process id), and an act on a preview would be refused for a change of none.
 */
export function checkCovered(outcome: CheckOutcome): CoveredCheck {
  return { code: outcome.code };
}
