import { RAW_OUTPUT_KEPT, type StoppedBy } from '../../machines/machine.ts';
import type { CommandContext } from '../context.ts';
import { clearHookOutput, clearingLines, type KeptValue } from '../secrets.ts';

/**
 * Runs a hook on the node's machine, stopped with all it started at `deadlineMs`, and
 * answers with its exit, its output as berth's words may keep it (cleared of secrets,
 * then cut: `SHOWN_OUTPUT`), and why berth stopped it if it did. `tell`, when given, is
 * told each line as it comes, cleared too.
 */
export async function runClearedHook(
  context: Pick<CommandContext, 'machine' | 'signal'>,
  script: string,
  env: Record<string, string>,
  secrets: readonly KeptValue[],
  deadlineMs: number,
  tell?: (line: string) => void,
): Promise<{ code: number; shown: string; stopped?: StoppedBy }> {
  // How much came: more than the machine keeps means its kept text begins at a cut.
  let came = 0;
  const lines = tell ? clearingLines(secrets, tell) : undefined;
  const result = await context.machine.run(script, env, {
    signal: context.signal,
    deadlineMs,
    output: (text) => {
      came += text.length;
      lines?.write(text);
    },
  });
  lines?.end();
  const shown = clearHookOutput(result.output, secrets, came > RAW_OUTPUT_KEPT).trim();
  return { code: result.code, shown, ...(result.stopped ? { stopped: result.stopped } : {}) };
}
