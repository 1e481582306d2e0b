import type { Blocker } from '../model/blocker.ts';
import type { Facts } from '../model/facts.ts';
import type { Account } from '../model/state.ts';
import type { Unresolved } from '../model/unresolved.ts';
import type { ConvergePlan } from './converge-plan.ts';
import type { Told } from './steps/told.ts';
import type { TakePlan } from './take-plan.ts';

/**
 * What a command did, as a value and in no words: the command line and the API render
 * `said` from it with the one renderer (src/words/said.ts).
 */
export type CommandResult =
  /** `already`: the node was to run the module before; nothing changed. */
  | { command: 'assign'; node: string; module: string; already: boolean }
  /** `managed`: berth runs the module there, so the next converge releases it. */
  | { command: 'unassign'; node: string; module: string; managed: boolean }
  | { command: 'forget'; node: string; module: string }
  | { command: 'adopt'; node: string; account: Account }
  /** Who read which kept value: never the value, which went to the command line alone. */
  | { command: 'secret'; node: string; module: string; secret: string; actor: string }
  | { command: 'rekey'; node: string; resealed: number }
  /**
   * A converge preview: its plan, each file's diff in it whole, sealed by its digest. How
   * much of a diff is shown is the renderer's choice (src/words/said.ts), not the result's.
   */
  | {
      command: 'converge';
      node: string;
      filter?: string;
      preview: {
        plan: ConvergePlan;
        digest: string;
        nothingToDo: boolean;
        /** `--refresh`: the node's package lists were fetched anew first. */
        refreshed?: true;
        /** The node's facts, when the plan read them: kept with the node's newest survey. */
        facts?: Facts;
      };
    }
  /** A converge act: the steps done, in order (`stopped` at a failure or when told to). */
  | {
      command: 'converge';
      node: string;
      act: { told: Told[]; stopped: boolean } | 'nothing-to-do';
    }
  | { command: 'take'; node: string; module: string; preview: TakePreview }
  /**
   * A take act: the steps done (`stopped` at a failure); `blocksConverge` when the module,
   * taken and so assigned, does not resolve, which the next converge would be blocked by.
   */
  | {
      command: 'take';
      node: string;
      module: string;
      act: { told: Told[]; stopped: boolean; blocksConverge?: Unresolved };
    };

/**
 * A take preview, as a value: its plan (each file's diff whole), the account's age against
 * the flip, its blockers.
 */
export interface TakePreview {
  plan: TakePlan;
  age: number;
  flip: number;
  nothingHeld: boolean;
  digest: string;
  blockers: Blocker[];
}
