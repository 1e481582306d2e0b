import type { Blocker } from '../model/blocker.ts';
import type { Refusal } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import type { NodeResult, StepReport } from '../model/result.ts';
import type { CommandResult } from './results.ts';

/**
 * What a command returns: what it did as a typed value (`result`), and its refusal if it
 * refused or stopped, typed with its code (src/model/refusal.ts). Their words are rendered
 * from them at the edge (src/words/said.ts, src/words/refusals.ts).
 */
export interface Outcome {
  result?: CommandResult;
  refusal?: Refusal;
  /** The node's part of the typed result; `failed` when a step of the act failed. */
  report?: {
    digest?: string;
    steps: StepReport[];
    blockers: Blocker[];
    failed?: true;
  };
  /**
   * What the runner made of the command on its target (one node or several): the
   * preview's digest, and each node's part of the typed result, by name.
   */
  target?: { digest?: string; nodes: Record<string, NodeResult> };
  /** A target of several nodes: how each ended, which its words are made from. */
  several?: TargetRun;
}

/** A run's outcome; `storeFailed` when the stores failed mid-act (then 503, exit 3). */
export type RunOutcome = Outcome & { storeFailed?: true };

/** How a node of a target ended, with its outcome and how long it took. */
export interface NodeEnd {
  node: string;
  how: 'previewed' | 'done' | 'failed' | 'blocked' | 'refused' | 'not-begun';
  outcome: RunOutcome;
  ms: number;
}

/** A target of several nodes, run: what its words are made from. */
export interface TargetRun {
  /** A command with no preview on each node, a preview, or an act. */
  kind: 'each' | 'preview' | 'act';
  command: string;
  request: CommandRequest;
  ends: readonly NodeEnd[];
  /** A preview's digest, over the target and every node's own. */
  digest?: string;
  /** The act was refused by the target's gate: nothing was begun, nothing to say. */
  refused?: true;
}
