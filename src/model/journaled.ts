import * as v from 'valibot';
import { AccountSchema } from './state.ts';
import { ToldSchema } from './steps.ts';
import { UnresolvedSchema } from './unresolved.ts';

/**
 * What an act did, as the journal keeps it: a command's typed result (an act's, never a
 * preview's: previews are not journaled), or one of berth's own acts on a node (its
 * package lists refreshed, the state's CA made). Its words are made when it is read
 * (src/words/journal.ts), with the same renderer the command's answer was said with.
 */
export const JournaledResultSchema = v.variant('command', [
  /** `already`: the node was to run the module before; nothing changed. */
  v.object({
    command: v.literal('assign'),
    node: v.string(),
    module: v.string(),
    already: v.boolean(),
  }),
  /** `managed`: berth runs the module there, so the next converge releases it. */
  v.object({
    command: v.literal('unassign'),
    node: v.string(),
    module: v.string(),
    managed: v.boolean(),
  }),
  v.object({ command: v.literal('forget'), node: v.string(), module: v.string() }),
  v.object({ command: v.literal('adopt'), node: v.string(), account: AccountSchema }),
  /** Who read which kept value: never the value. */
  v.object({
    command: v.literal('secret'),
    node: v.string(),
    module: v.string(),
    secret: v.string(),
    actor: v.string(),
  }),
  v.object({ command: v.literal('rekey'), node: v.string(), resealed: v.number() }),
  /** A converge act: the steps done, in order (`stopped` at a failure or when told to). */
  v.object({
    command: v.literal('converge'),
    node: v.string(),
    act: v.union([
      v.object({ told: v.array(ToldSchema), stopped: v.boolean() }),
      v.literal('nothing-to-do'),
    ]),
  }),
  /**
   * A take act: the steps done (`stopped` at a failure); `blocksConverge` when the module,
   * taken and so assigned, does not resolve.
   */
  v.object({
    command: v.literal('take'),
    node: v.string(),
    module: v.string(),
    act: v.object({
      told: v.array(ToldSchema),
      stopped: v.boolean(),
      blocksConverge: v.optional(UnresolvedSchema),
    }),
  }),
  /** `--refresh`: the node's package lists fetched anew (a refusal says why not). */
  v.object({ command: v.literal('refresh'), node: v.string() }),
  /** The state's CA made at its first need: its subject and end, when its certificate said. */
  v.object({
    command: v.literal('ca'),
    named: v.optional(v.object({ subject: v.string(), until: v.string() })),
  }),
]);
export type JournaledResult = v.InferOutput<typeof JournaledResultSchema>;

type Told = v.InferOutput<typeof ToldSchema>;

/**
 * An act's result as the journal keeps it: each written file's diff left out. A diff's
 * lines are the node's file as it was, which may hold a secret the vault does not keep
 * (a value replaced since, a file edited by hand); the act's words never show them.
 */
export function journaledOf(result: JournaledResult): JournaledResult {
  if (result.command === 'converge' && result.act !== 'nothing-to-do')
    return { ...result, act: { ...result.act, told: result.act.told.map(withoutDiff) } };
  if (result.command === 'take')
    return { ...result, act: { ...result.act, told: result.act.told.map(withoutDiff) } };
  return result;
}

function withoutDiff(told: Told): Told {
  const { step } = told;
  if (step.do !== 'write' || step.why.because !== 'differs') return told;
  return { ...told, step: { ...step, why: { ...step.why, diff: [] } } };
}
