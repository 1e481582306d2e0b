import type { Code } from '../codes.ts';
import type { LoadConfig } from '../config/config.ts';
import type { ReachMachine } from '../machines/machine.ts';
import type { RunOutcome } from '../outcome.ts';
import type { Settings } from '../settings.ts';
import type { Stores } from '../stores/stores.ts';
import type { CommandContext } from './context.ts';
import type { FleetEvent } from './fleet-watch.ts';

/** What both faces give the runner: where things are. */
export interface ActDeps {
  loadConfig: LoadConfig;
  stores: Stores;
  machines: (settings: Settings) => ReachMachine;
}

/** What both faces give the runner of themselves: who is asking, and how it is shown. */
export type Face = Pick<
  CommandContext,
  | 'actor'
  | 'via'
  | 'mint'
  | 'fullDiff'
  | 'progress'
  | 'output'
  | 'signal'
  | 'lockWaitMs'
  | 'refresh'
> & {
  now?: () => Date;
  /** Told how each node of a target of several is getting on: the command line shows it. */
  watch?: (event: FleetEvent) => void;
};

/**
 * A request made ready: its required fields checked, its stores opened and its target
 * resolved. `run` carries it out, journals it and closes the stores. A face answers
 * `missing` with a 400 or exit 2, `stores` with a 503 or exit 3, and a run's outcome
 * with 200/409, 0/1.
 */
export type OpenedAct =
  | { kind: 'missing'; refused: string; code: 'fields_missing' }
  | { kind: 'stores'; refused: string; code: Code }
  | { kind: 'ready'; run(): Promise<RunOutcome> };
