import { hookEnv, type Readings } from '../../readings.ts';
import type { CommandContext } from '../context.ts';
import { runClearedHook } from './cleared-hook.ts';
import type { HookDone } from './told.ts';

/** How many of a hook's last lines said (and so the journal) keeps. */
const HOOK_LINES_KEPT = 5;

/** A hook that did not end well: failed (exit not 0) or stopped by berth. */
export class HookFailed extends Error {}

/**
 * Runs a module's start, stop or reload, streaming its output (whole lines, cleared of
 * secrets) to `context.output`; a failure or a stop by berth throws HookFailed, in words
 * whose output was cleared of secrets before it was cut. The module's values and the
 * node's facts (`readings`) are in its environment.
 */
export async function runHook(
  node: string,
  module: string,
  hook: HookDone['hook'],
  script: string,
  context: CommandContext,
  readings?: Readings,
): Promise<HookDone> {
  const secrets = await context.store.vault.all();
  const tell = context.output;
  tell?.(`running ${hook} of ${module} …`);
  const { code, shown } = await runClearedHook(
    context,
    script,
    hookEnv(node, module, readings),
    secrets,
    tell && ((line) => tell(`  ${line}`)),
  );
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
