import { exitOf } from '../model/codes.ts';
import { enveloped } from '../model/result.ts';
import { oneLine } from '../utils/one-line.ts';
import type { Io } from './io.ts';

/**
 * A failure berth did not foresee, met at the command line's edge: said in one line with
 * code `internal_error`, never as a stack, which tells an operator nothing and may hold
 * what was being worked on. With `--json` the line is the one envelope; should standard
 * output be what failed, it goes to standard error. `BERTH_DEBUG` set adds the stack on
 * standard error, for whoever mends berth. The exit is the code's.
 */
export function unforeseen(error: unknown, json: boolean, io: Io): number {
  const message = oneLine(error instanceof Error ? error.message : String(error));
  const debug = (io.env.BERTH_DEBUG ?? '') !== '';
  const refused = `berth: internal error: ${message}; berth did not foresee this failure, and what was asked may not have been carried out: report it with these words${debug ? '' : ' (BERTH_DEBUG=1 shows where it arose)'}`;
  const said = json ? JSON.stringify(enveloped({ refused, code: 'internal_error' })) : refused;
  tryEach([() => (json ? io.out(said) : io.err(said)), () => io.err(said)]);
  if (debug && error instanceof Error && error.stack) tryEach([() => io.err(error.stack ?? '')]);
  return exitOf('internal_error');
}

/** The first of `writes` that does not fail; none when every one does: nothing is left to say it. */
function tryEach(writes: readonly (() => void)[]) {
  for (const write of writes) {
    try {
      write();
      return;
    } catch {
      // The next way out.
    }
  }
}
