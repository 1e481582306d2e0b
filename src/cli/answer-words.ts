import type { Asked } from '../commands/command-shape.ts';
import type { Io } from './io.ts';

/**
 * How the command line shows a command's typed answer: its words (a refusal alone is
 * said on standard error for every command alike, before these are asked), and, where it
 * is not the answer as one JSON object, its `--json`.
 */
export interface AnswerWords<A> {
  words(answer: A, asked: Asked, io: Io): void | Promise<void>;
  /** What `--json` prints, or nothing at all. */
  json?(answer: A): string | undefined;
}
