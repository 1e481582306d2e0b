import type { Tell } from '../commands/progress-events.ts';
import { progressLine } from '../words/progress.ts';
import { type FleetProgress, fleetProgress } from './fleet-progress.ts';
import type { Io } from './io.ts';

/**
 * How the command line shows an act as it goes, from the events it tells. A target of
 * one is shown as its node alone: each step, hook and hook line on standard output as it
 * comes. A target of several is shown node by node (fleet-progress.ts). A plan file's act
 * prints what the plan says once the file was checked (`planWords`).
 */
export interface ShownProgress {
  tell: Tell;
  /** Whether the steps went to standard output as they came (then only the untold is left). */
  readonly toldOnOutput: boolean;
  /** Draws the last state and lets the terminal go. */
  end(): void;
}

export function shownProgress(
  io: Io,
  options: { terminal: boolean; planWords?: string },
): ShownProgress {
  let fleet: FleetProgress | undefined;
  return {
    tell(event) {
      if (event.kind === 'target') {
        if (event.nodes.length > 1) fleet = fleetProgress(io, options);
      } else if (event.kind === 'plan-checked') {
        if (options.planWords !== undefined) io.out(options.planWords);
      } else if (fleet) fleet.tell(event);
      else {
        const line = progressLine(event);
        if (line !== undefined) io.out(line);
      }
    },
    get toldOnOutput() {
      return fleet?.toldOnOutput ?? true;
    },
    end() {
      fleet?.end();
    },
  };
}
