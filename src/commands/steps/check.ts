import type { KeptValue } from '../../secrets.ts';
import type { CommandContext } from '../context.ts';
import { runClearedHook } from './cleared-hook.ts';
import type { CheckOutcome } from './step.ts';

/**
 * One module's `check`, as an outcome: its exit and its last line, cleared of secrets.
 * Take and converge previews plan on it; `status --check` shows it.
 */
export async function runCheck(
  node: string,
  module: string,
  script: string,
  secrets: readonly KeptValue[],
  context: Pick<CommandContext, 'machine' | 'signal'>,
): Promise<CheckOutcome> {
  const result = await runClearedHook(
    context,
    script,
    { BERTH_NODE: node, BERTH_MODULE: module },
    secrets,
  );
  return { code: result.code, last: result.shown.split('\n').at(-1) ?? '' };
}
