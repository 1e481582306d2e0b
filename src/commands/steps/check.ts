import { HOOK_DEADLINE_MS } from '../../machines/machine.ts';
import { hookEnv, type Readings } from '../../model/readings.ts';
import type { CommandContext } from '../context.ts';
import type { KeptValue } from '../secrets.ts';
import { runClearedHook } from './cleared-hook.ts';
import type { CheckOutcome, CoveredCheck } from './step.ts';

/** The exit a check stopped at its deadline is given, as timeout(1) answers. */
const TIMED_OUT = 124;

/**
 * One module's `check`, as an outcome: its exit and its last line, cleared of secrets;
 * stopped, with all it started, once the definition's `timeout` passes (a check that never
 * answers fails). Take and converge previews plan on it; `status --check` shows it. The
 * module's values and the node's facts (`readings`) are in its environment.
 */
export async function runCheck(
  node: string,
  module: string,
  hook: { script: string; timeout?: number },
  secrets: readonly KeptValue[],
  context: Pick<CommandContext, 'machine' | 'signal'>,
  readings?: Readings,
): Promise<CheckOutcome> {
  const deadline = hook.timeout ?? HOOK_DEADLINE_MS;
  const result = await runClearedHook(
    context,
    hook.script,
    hookEnv(node, module, readings),
    secrets,
    deadline,
  );
  // Its own last line, not the line the machine adds to say it was stopped.
  const lines = result.shown.split('\n');
  if (result.stopped === 'deadline')
    return { code: TIMED_OUT, last: lines.at(-2) ?? '', timedOut: deadline };
  return { code: result.code, last: lines.at(-1) ?? '' };
}

/**
 * What a digest covers of a check: its exit status (whether it passes, and how it fails),
 * which is what the act depends on. Its words are not: they may vary from run to run (a
 * time, a process id), and an act on a preview would be refused for a change of none.
 */
export function checkCovered(outcome: CheckOutcome): CoveredCheck {
  return { code: outcome.code };
}
