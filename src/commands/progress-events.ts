import type { NodeEnd } from './outcome.ts';
import type { HookDone, Told } from './steps/told.ts';

/**
 * What an act tells as it goes, as values in no words: the face that asked renders each
 * kind (the command line: a step's line as it is done, or a line a node redrawn in place).
 * Every node's events are told, of a target of one as of several: how to show them is
 * the face's.
 */
export type ProgressEvent =
  /** The nodes the target resolved to, in name order: told first, once. */
  | { kind: 'target'; nodes: readonly string[] }
  /** The plan file acted on is as berth wrote it, with these stores, and not acted on yet. */
  | { kind: 'plan-checked'; file: string }
  /** A node waits for its lock. */
  | { kind: 'waiting'; node: string }
  /** A node's preview is being made. */
  | { kind: 'surveying'; node: string }
  /**
   * A node's act begins; `steps`, how many its plan has when the target's check planned it
   * (a node of several: a node alone plans within its act).
   */
  | { kind: 'acting'; node: string; steps?: number }
  /** A step done, with a hook's outcome when it ran one. */
  | { kind: 'step'; node: string; told: Told }
  /** A hook begins on the node. */
  | { kind: 'hook-started'; node: string; module: string; hook: HookDone['hook'] }
  /** A whole line a hook wrote, as the node wrote it, cleared of secrets. */
  | { kind: 'hook-line'; node: string; line: string }
  /** How a node of an act, or of a command with no preview, ended. */
  | { kind: 'ended'; end: NodeEnd };

/** Told each event of an act as it comes: what a face gives to see an act go. */
export type Tell = (event: ProgressEvent) => void;
