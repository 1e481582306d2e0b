import type { LoadConfig } from '../config/config.ts';
import type { ReachMachine } from '../machines/machine.ts';
import type { RefusalOf } from '../model/refusal.ts';
import type { Settings } from '../model/settings.ts';
import type { Stores } from '../stores/stores.ts';
import type { CommandContext } from './context.ts';
import type { RunOutcome } from './outcome.ts';
import type { PlanAsked } from './plan-records.ts';

/** What both faces give the runner: where things are. */
export interface ActDeps {
  loadConfig: LoadConfig;
  stores: Stores;
  machines: (settings: Settings) => ReachMachine;
}

/** What both faces give the runner of themselves: who is asking, and how it is shown. */
export type Face = Pick<CommandContext, 'actor' | 'via' | 'line' | 'tell' | 'signal'> & {
  now?: () => Date;
  /**
   * A preview to be written to a plan file (`--out`): makes the file's content from the
   * preview's outcome, its words rendered as the face shows them; the runner keeps its
   * digest on each node (plan-records.ts).
   */
  writingPlan?: (outcome: RunOutcome) => unknown;
  /**
   * An act of a plan file (`berth act FILE`): checked against each node's records under
   * its lock before anything else; `plan-checked` is told once it may be acted on.
   */
  actingOnPlan?: PlanAsked;
};

/**
 * A request made ready: its required fields checked, its stores opened and its target
 * resolved. `run` carries it out, journals it and closes the stores. A face answers
 * `missing` with a 400 or exit 2, `stores` with a 503 or exit 3, and a run's outcome
 * with 200/409, 0/1.
 */
export type OpenedAct =
  | { kind: 'missing'; refusal: RefusalOf<'fields-missing'> }
  | { kind: 'stores'; refusal: RefusalOf<'stores'> }
  | { kind: 'ready'; run(): Promise<RunOutcome> };
