import type { Account } from '../state.ts';
import type { ConvergePlan } from './converge-plan.ts';
import type { Told } from './steps/words.ts';

/**
 * What a command did, as a value and in no words: the command line and the API render
 * `said` from it with the one renderer (src/said.ts). take still returns its `said` in
 * words (from its typed steps), see docs/engine.md.
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
  /** A converge preview: its plan, sealed by its digest; `fullDiff` as asked. */
  | {
      command: 'converge';
      node: string;
      filter?: string;
      preview: { plan: ConvergePlan; digest: string; nothingToDo: boolean; fullDiff: boolean };
    }
  /** A converge act: the steps done, in order (`stopped` at a failure or when told to). */
  | {
      command: 'converge';
      node: string;
      act: { told: Told[]; stopped: boolean } | 'nothing-to-do';
    };
