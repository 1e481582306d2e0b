import type { Refusal } from '../model/refusal.ts';
import type { Told } from './steps/told.ts';

/** Nodes of a target acted on at once when the request does not say (`--parallel`, `parallel`). */
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
  | { node: string; kind: 'stage'; stage: NodeStage; refusal?: Refusal }
  /** A step done: `done` of the node's `of` steps. */
  | { node: string; kind: 'step'; told: Told; done: number; of: number }
  /** A line a hook wrote, cleared of secrets. */
  | { node: string; kind: 'output'; line: string };
