import type * as v from 'valibot';
import type { HookDoneSchema, ToldSchema, VoiceSchema } from '../../model/steps.ts';

/**
 * Whose words a step is said in once done: a take says its secrets one by one
 * ("secret db: read into the vault from …"), a converge says what it did.
 */
export type Voice = v.InferOutput<typeof VoiceSchema>;

/** A step done, as the engine tells it: the step, and a hook's outcome when it ran one. */
export type Told = v.InferOutput<typeof ToldSchema>;

/** A hook's words once it ran: its own, and its last lines, cleared of secrets. */
export type HookDone = v.InferOutput<typeof HookDoneSchema>;
