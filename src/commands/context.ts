import type { Machine, ReachMachine } from '../machines/machine.ts';
import type { CommandRequest, Outcome } from '../request.ts';
import { checkNodeIn } from '../settings.ts';
import type { Stores } from '../stores/stores.ts';

/** What every command function is given besides the request. */
export interface CommandContext {
  stores: Stores;
  reach: ReachMachine;
  /** Who acts: the OS user on the command line, the token's subject over the API. */
  actor: string;
  via: 'cli' | 'api';
  now: () => Date;
  /** Secrets the caller allows a take to mint over found data: `--mint`, command line only. */
  mint: readonly string[];
  /**
   * Told each line of `said` as an act does it, so that a command line shows a long
   * converge step by step; `said` still holds every line, in the same order.
   */
  progress?: (line: string) => void;
  /**
   * Aborts when the act must stop now (berth api's close deadline, or Ctrl-C on the
   * command line): a running hook is stopped, and the act ends with what it did.
   */
  signal?: AbortSignal;
}

export type CommandFunction = (
  request: CommandRequest,
  context: CommandContext,
) => Promise<Outcome>;

export function refuse(error: string, said = ''): Outcome {
  return { said, error };
}

/** The first refusal a node name meets: the name rule, then the inventory. */
export function checkNode(context: CommandContext, node: string): string | undefined {
  return checkNodeIn(context.stores.settings, node);
}

/** The node's machine, or the refusal when it cannot be reached. */
export async function reachNode(
  context: CommandContext,
  node: string,
): Promise<{ machine: Machine } | { refusal: string }> {
  const machine = context.reach(node);
  const unreachable = await machine.reach();
  return unreachable ? { refusal: `${node} cannot be reached: ${unreachable}` } : { machine };
}
