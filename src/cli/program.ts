import type { LineOptions } from '../commands/options.ts';
import type { StateLocation } from '../config/state-dir.ts';
import type { Io } from './io.ts';

/** What a command is given on the command line, once cac parsed it and berth read it. */
export interface Given {
  /** Its words as typed: cac's, then those after `--`. */
  words: readonly string[];
  /** Its options (and berth's own), typed: each read by its schema in the options table. */
  options: LineOptions;
  /** Where the state is: `--state`, else the environment's. */
  location: () => StateLocation;
  io: Io;
  /** cac's help: of one command, or of all. */
  help(command?: string): number;
}

/** How a command runs on the command line: its exit code. */
export type Program = (given: Given) => Promise<number>;
