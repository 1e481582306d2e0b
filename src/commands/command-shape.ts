import type { ActDeps } from './act-shapes.ts';
import type { CommandFunction } from './context.ts';
import type { LineOptions, OptionName } from './options.ts';
import type { Reading } from './reading-answer.ts';

/**
 * A command as the act runner runs it, whichever face asks: made from its entry of the
 * command table (table.ts), or by a reading that runs through the runner (`status --check`).
 */
export interface CommandShape {
  name: string;
  /** Required request fields: both faces check them with the same words. */
  needs: readonly ('node' | 'module')[];
  /** Its options (options.ts): `yes` among them makes it preview first, then act. */
  options: readonly OptionName[];
  run: CommandFunction;
  /**
   * Works on the node's records alone, never its machine: it reaches a node berth.json no
   * longer names while the stores keep its records (`rekey`: else its values would stay
   * sealed to a recipient removed).
   */
  recordsAlone?: true;
  /** Changes nothing (`status --check`): not journaled, as a preview is not. */
  changesNothing?: true;
  /**
   * Its preview of a whole node is that node's survey: kept by the stores as the node's
   * newest, for whoever reads the fleet later without surveying it (`berth view`).
   */
  keepsSurvey?: true;
}

/** A command the Command API answers: its route, and the summary its OpenAPI entry shows. */
export interface Route extends CommandShape {
  route: `/${string}`;
  summary: string;
}

/** What a command that answers a typed value was asked: its words, and the options given. */
export interface Asked {
  words: readonly string[];
  options: LineOptions;
}

/** What such a command is given: where things are, and who asks (the OS user). */
export interface AnswerDeps extends ActDeps {
  actor: string;
}

/** A command that answers a typed value, which the command line renders in words. */
export type AnswerFunction<A> = (asked: Asked, deps: AnswerDeps) => Promise<Reading<A>>;
