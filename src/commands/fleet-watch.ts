import type { Told } from './steps/words.ts';

/** How a target's act runs over its nodes. */
export interface FleetOptions {
  /** At most this many nodes act at once (`--parallel`, default 10). */
  parallel: number;
  /** A rolling act: this many nodes at a time, none begun after a batch where one failed. */
  batch?: number;
}

export const DEFAULT_PARALLEL = 10;

/** Where a node of a target stands, as the progress shows it. */
export type NodeStage =
  | 'waiting'
  | 'surveying'
  | 'acting'
  | 'done'
  | 'failed'
  | 'blocked'
  | 'refused'
  | 'not-begun';

/** What a target's run tells its watcher, node by node, as it goes. */
export type FleetEvent =
  | { node: string; kind: 'stage'; stage: NodeStage; words?: string }
  /** A step done: `done` of the node's `of` steps. */
  | { node: string; kind: 'step'; told: Told; done: number; of: number }
  /** A line a hook wrote, cleared of secrets. */
  | { node: string; kind: 'output'; line: string };
