import { writeSync } from 'node:fs';
import { type Code, exitOf } from '../model/codes.ts';
import { visible } from './visible.ts';

/** Where the command line writes, so that tests and the binary share one path. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/**
 * The command line's one way out: everything written to standard output and error shows
 * its control characters rather than obeying them (visible.ts), wherever the text came from.
 */
export const processIo: Io = {
  out: (text) => writeLine(1, visible(text)),
  err: (text) => writeLine(2, visible(text)),
  env: process.env,
};

/**
 * The exits no code stands for: done; a refusal that carries no code (an answer other
 * than `yes` at a terminal, a port berth cannot listen on); and `--detailed-exitcode`'s
 * 2 for a preview with steps and no blocker. Every other exit is its code's (`exitOf`,
 * src/model/codes.ts).
 */
export const EXIT = { done: 0, refused: 1, somethingToDo: 2 } as const;

/** A typed answer's exit: 0 without a code, else its code's (src/model/codes.ts). */
export function exitOfAnswer(code: Code | undefined): number {
  return code === undefined ? EXIT.done : exitOf(code);
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** Descriptors whose reader has gone away: nothing more is written there. */
const gone = new Set<number>();
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes a line to standard output or error in place, whole, before going on. A command
 * prints and exits, and Node's `process.stdout` would cost every start its stream
 * machinery (about 3 ms for a pipe). A reader that has gone away (`berth log | head -1`:
 * EPIPE) is not a failure of berth: the act is done and journaled whether or not anyone
 * reads what it said. A descriptor that is not ready (a full non-blocking pipe: EAGAIN)
 * is waited on, a millisecond at a time.
 */
function writeLine(fd: number, text: string) {
  if (gone.has(fd)) return;
  const bytes = Buffer.from(text.endsWith('\n') ? text : `${text}\n`);
  for (let done = 0; done < bytes.length; ) {
    try {
      done += writeSync(fd, bytes, done);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') Atomics.wait(pause, 0, 0, 1);
      else if (code === 'EPIPE') {
        gone.add(fd);
        return;
      } else throw error;
    }
  }
}
