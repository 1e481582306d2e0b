import type { Step } from './step.ts';

/**
 * Whose words a step is said in once done: a take says its secrets one by one
 * ("secret db: read into the vault from …"), a converge says what it did.
 */
export type Voice = 'take' | 'converge';

/** A step done, as the engine tells it: the step, and a hook's outcome when it ran one. */
export interface Told {
  step: Step;
  voice: Voice;
  hook?: HookDone;
}

/** A hook's words once it ran: its own, and its last lines, cleared of secrets. */
export interface HookDone {
  hook: 'setup' | 'start' | 'stop' | 'reload';
  module: string;
  /** The hook's last lines (at most hook.ts's HOOK_LINES_KEPT): said, so the journal, keeps them. */
  tail: string[];
}
