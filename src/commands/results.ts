import type { Account } from '../state.ts';

/**
 * What a command did, as a value and in no words: the command line and the API render
 * `said` from it with the one renderer (src/said.ts). take and converge still return
 * their `said` in words (from their typed steps), see docs/engine.md.
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
  | { command: 'rekey'; node: string; resealed: number };
