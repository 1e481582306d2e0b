import type { Machine } from '../machines/machine.ts';
import type { Catalog } from '../model/catalog.ts';
import type { Refusal } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import type { Settings } from '../model/settings.ts';
import type { NodeStore } from '../stores/stores.ts';
import type { CommandOptions } from './options.ts';
import type { Outcome } from './outcome.ts';
import type { Tell } from './progress-events.ts';
import type { StateCaAccess } from './state-ca.ts';

/** What every command function is given besides the request: one node, opened for the act. */
export interface CommandContext {
  /** The node's records, under its lock for the whole act. */
  store: NodeStore;
  settings: Settings;
  catalog: Catalog;
  /** The node's machine; reaching it is the first thing a survey does. */
  machine: Machine;
  /** The target the act was asked for (`@web`), of which this node is one: journaled with it. */
  target?: string;
  /** Who acts: the OS user on the command line, the token's subject over the API. */
  actor: string;
  via: 'cli' | 'api';
  now: () => Date;
  /**
   * The state's CA, made at its first need: what signs a `tls` secret's certificate, and
   * what `{{ca}}` places.
   */
  ca?: StateCaAccess;
  /**
   * The command line's options (options.ts), as one typed value; none over the API. A
   * command reads those it has: `mint` (secrets a take may mint over found data),
   * `rotate` (key secrets a converge rotates, by name), `lockTimeout` (how long an act waits for a lock it needs on the node, its package
   * manager's, as for the node's own; 10 s when not given), `refresh` (a converge preview
   * fetches the node's package lists anew first). Never `--full-diff`: how much of a diff
   * is shown is the words' choice, at the edge.
   */
  line: CommandOptions;
  /**
   * Told each step as the engine does it, each hook as it begins and each line it writes
   * (cleared of secrets), so that a command line shows a long act as it goes. `said`
   * still holds every step, in the same order, and a hook's last lines after its step.
   */
  tell?: Tell;
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

/** A command's refusal (nothing done, so nothing said). */
export function refuse(refusal: Refusal): Outcome {
  return { refusal };
}
