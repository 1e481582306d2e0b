import { writeSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { CommandAnswer } from '../model/result.ts';

/**
 * Whether `--yes` without `--digest` is to show the preview and ask: only where a person
 * can answer, standard input and output both a terminal, and not for `--json`, which a
 * script reads. Elsewhere it is refused as before, unless there is nothing to do.
 */
export function canAsk(json: boolean): boolean {
  return !json && isatty(0) && isatty(1);
}

/**
 * What a shown preview allows: to ask; to act at once, as nothing is to be done anywhere
 * (`yes` alone is enough then); or nothing, as every node with something to do is
 * blocked or refused.
 */
export function whatToAsk(
  answer: CommandAnswer,
): { to: 'ask'; question: string } | { to: 'act' } | { to: 'refuse'; refused: string } {
  const nodes = Object.entries(answer.nodes);
  if (answer.digest === undefined || nodes.length === 0)
    return { to: 'refuse', refused: 'nothing was done: the preview was refused' };
  const free = ([, node]: (typeof nodes)[number]) =>
    node.outcome === 'previewed' && node.blockers.length === 0;
  if (nodes.every((entry) => free(entry) && entry[1].steps.length === 0)) return { to: 'act' };
  if (!nodes.some((entry) => free(entry) && entry[1].steps.length > 0))
    return {
      to: 'refuse',
      refused:
        nodes.length === 1
          ? 'nothing was done: the act would be refused while a blocker stands'
          : 'nothing was done: no node has something to do that no blocker stands in the way of',
    };
  const of = nodes.length === 1 ? (nodes[0] as (typeof nodes)[number])[0] : `${nodes.length} nodes`;
  return { to: 'ask', question: `act on this preview of ${of}? type yes: ` };
}

/**
 * Asks at the terminal and answers the line typed; undefined at end of input (Ctrl-D) or
 * when `signal` aborts (Ctrl-C). The terminal edits and echoes the line itself.
 */
export async function askAtTerminal(
  question: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  writeSync(1, question);
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    return await new Promise<string | undefined>((done) => {
      const stop = () => done(undefined);
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      lines.once('line', done);
      lines.once('close', stop);
    });
  } finally {
    lines.close();
    // Let go of the terminal, so that berth ends when its work does.
    process.stdin.destroy();
  }
}
