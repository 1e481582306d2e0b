import { HOOK_DEADLINE_MS } from '../../machines/machine.ts';
import { hookEnv, type Readings } from '../../model/readings.ts';
import { describeDuration } from '../../utils/duration.ts';
import type { CommandContext } from '../context.ts';
import { runClearedHook } from './cleared-hook.ts';
import type { HookDone } from './told.ts';

/** How many of a hook's last lines said (and so the journal) keeps. */
const HOOK_LINES_KEPT = 5;

/**
 * A hook that did not end well: failed (exit not 0), stopped at its deadline
 * (`hook_timeout`), or stopped by berth.
 */
export class HookFailed extends Error {
  constructor(
    message: string,
    readonly code: 'hook_failed' | 'hook_timeout' = 'hook_failed',
  ) {
    super(message);
  }
}

/**
 * Runs a module's setup, start, stop or reload, telling that it begins and each whole
 * line of its output, cleared of secrets (`context.tell`), stopped with all it started
 * once `timeout` (the definition's, else HOOK_DEADLINE_MS) passes; a failure, its deadline or a stop by berth
 * throws HookFailed, in words whose output was cleared of secrets before it was cut. The
 * module's values and the node's facts (`readings`) are in its environment.
 */
export async function runHook(
  node: string,
  module: string,
  hook: HookDone['hook'],
  step: { script: string; timeout?: number },
  context: CommandContext,
  readings?: Readings,
): Promise<HookDone> {
  const secrets = await context.store.vault.all();
  const { tell } = context;
  const deadline = step.timeout ?? HOOK_DEADLINE_MS;
  tell?.({ kind: 'hook-started', node, module, hook });
  const { code, shown, stopped } = await runClearedHook(
    context,
    step.script,
    hookEnv(node, module, readings),
    secrets,
    deadline,
    tell && ((line) => tell({ kind: 'hook-line', node, line })),
  );
  if (stopped === 'deadline') {
    // Its own output, without the line the machine adds to say it was stopped.
    const own = shown.split('\n').slice(0, -1).join('\n').trim();
    const output = own ? `: ${own}` : '';
    throw new HookFailed(
      `${hook} of ${module} did not end within its timeout of ${describeDuration(deadline)}, so berth stopped it and all it started${output}`,
      'hook_timeout',
    );
  }
  if (context.signal?.aborted) {
    throw new HookFailed(`${hook} of ${module} was stopped: ${stopReason(context.signal)}`);
  }
  if (code !== 0) {
    const output = shown ? `: ${shown}` : '';
    throw new HookFailed(`${hook} of ${module} failed (exit ${code})${output}`);
  }
  const tail = shown
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-HOOK_LINES_KEPT);
  return { hook, module, tail };
}

/** Why an act was told to stop, in words (the abort reason, when it is text). */
export function stopReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'berth was told to stop';
}
