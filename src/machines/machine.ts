/** What a path on a machine is, as far as berth needs to know. */
export type PathFacts =
  | { kind: 'missing' }
  | { kind: 'file'; size: number; mode: string }
  | { kind: 'directory'; empty: boolean }
  | { kind: 'other' };

export interface RunResult {
  code: number;
  /** The end of what the command wrote, for the refusal when it fails. */
  output: string;
}

/**
 * A machine berth acts on. Paths are machine paths (absolute, normalised); a rooted
 * machine takes them under its root, an ssh machine will take them on the far side.
 */
export interface Machine {
  /** Says why the machine cannot be reached, or undefined when it can. */
  reach(): Promise<string | undefined>;
  inspect(path: string): Promise<PathFacts>;
  read(path: string): Promise<Uint8Array | undefined>;
  /** Writes a whole file atomically, making its directory first. */
  write(path: string, data: Uint8Array, mode: number): Promise<void>;
  makeDirectory(path: string): Promise<void>;
  /**
   * Runs a hook with `sh -c`, its environment extended by `env` and `BERTH_ROOT`;
   * `signal` stops it.
   */
  run(script: string, env: Record<string, string>, signal?: AbortSignal): Promise<RunResult>;
}

/** How the commands get to a node's machine; the edge decides what reaches it. */
export type ReachMachine = (node: string) => Machine;
