import { didYouMean } from '../utils/did-you-mean.ts';
import { completionText } from './completion-text.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { SHELLS } from './shells.ts';

/**
 * `berth completion bash|zsh|fish`: prints that shell's script (completion/berth.SHELL).
 * Each is thin: at a Tab it asks `berth __complete` with the words typed so far, so that
 * commands, flags, nodes, groups and modules are listed by berth itself, from the
 * berth.json and catalog of the state directory in use.
 */
export function printCompletion(shell: string | undefined, io: Io): number {
  if (shell === undefined)
    throw new UsageError(`berth completion needs a shell: ${SHELLS.join(', ')}`);
  if (!SHELLS.includes(shell))
    throw new UsageError(
      `berth completion has no script for ${JSON.stringify(shell)}${didYouMean(shell, SHELLS)}; it has ${SHELLS.join(', ')}`,
    );
  io.out(completionText(`berth.${shell}`).trimEnd());
  return EXIT.done;
}
