import { redactSecrets } from '../../secrets.ts';
import type { CommandContext } from '../context.ts';

/** A hook's words once it ran: its own, and its last lines, cleared of secrets. */
export interface HookDone {
  hook: 'start' | 'stop' | 'reload';
  module: string;
  /** The hook's last lines (at most HOOK_LINES_KEPT): said, so the journal, keeps them. */
  tail: string[];
}

/** How many of a hook's last lines said (and so the journal) keeps. */
const HOOK_LINES_KEPT = 5;

/** A hook that did not end well: failed (exit not 0) or stopped by berth. */
export class HookFailed extends Error {}

/**
 * Runs a module's start, stop or reload, streaming its output (whole lines, cleared of
 * secrets) to `context.output`; a failure or a stop by berth throws HookFailed, in words.
 */
export async function runHook(
  node: string,
  module: string,
  hook: HookDone['hook'],
  script: string,
  context: CommandContext,
): Promise<HookDone> {
  const secrets = await context.store.vault.all();
  const tell = context.output;
  tell?.(`running ${hook} of ${module} …`);
  // Whole lines only: a secret cut in two by a chunk would pass the redaction.
  let pending = '';
  const stream = (text: string) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) tell?.(`  ${redactSecrets(line, secrets)}`);
  };
  const result = await context.machine.run(
    script,
    { BERTH_NODE: node, BERTH_MODULE: module },
    { signal: context.signal, ...(tell ? { output: stream } : {}) },
  );
  if (pending) tell?.(`  ${redactSecrets(pending, secrets)}`);
  if (context.signal?.aborted) {
    throw new HookFailed(`${hook} of ${module} was stopped: ${stopReason(context.signal)}`);
  }
  const shown = redactSecrets(result.output, secrets).trim();
  if (result.code !== 0) {
    const output = shown ? `: ${shown}` : '';
    throw new HookFailed(`${hook} of ${module} failed (exit ${result.code})${output}`);
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
