import * as v from 'valibot';
import type { Code } from '../model/codes.ts';
import { CommandAnswerSchema } from '../model/result.ts';
import type { Resealed } from '../stores/stores.ts';
import { openAct } from './act.ts';
import type { AnswerFunction, CommandShape } from './command-shape.ts';
import type { RunOutcome } from './outcome.ts';
import { RefusedSchema, refused, refusedFor } from './reading-answer.ts';
import { rekey } from './rekey.ts';

/** What a node's rekey is to the runner: an act on its records alone, journaled. */
const REKEY: CommandShape = {
  name: 'rekey',
  needs: ['node'],
  options: [],
  run: rekey,
  recordsAlone: true,
};

/**
 * Each node's rekey, as the runner answers a target of them; and, for the whole state,
 * the state's CA: sealed again, or why not (its key kept as it was). `--json` prints it.
 */
export const RekeyAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    ...CommandAnswerSchema.entries,
    ca: v.optional(v.object({ resealed: v.boolean(), refused: v.optional(v.string()) })),
  }),
]);
export type RekeyAnswer = v.InferOutput<typeof RekeyAnswerSchema>;

/**
 * A rekey as the command answers it, typed: the runner's outcome over the nodes (none
 * when no node has records), and the state's CA sealed again or `unopened` (kept as it
 * was). The edge renders it as `RekeyAnswer`.
 */
export interface RekeyState {
  ran?: RunOutcome;
  ca?: { resealed: boolean; unopened?: true };
  code?: Code;
}

/**
 * `berth rekey [node]`: every node with records (or the one named) as one target, through
 * the runner: one act a node, each journaled; and, for the whole state, the state's CA.
 * A value that could not be opened is named, and kept as it was.
 */
export const rekeyState: AnswerFunction<RekeyState> = async ({ words }, deps) => {
  const [node] = words;
  let target: string;
  let resealed: Resealed | undefined;
  try {
    await deps.stores.open();
    target = node ?? (await deps.stores.listNodes()).join(',');
    // The CA is the state's, not a node's: sealed again when the whole state is.
    if (node === undefined && (await deps.stores.readCa())) resealed = await deps.stores.resealCa();
  } catch (error) {
    await deps.stores.close().catch(() => {});
    return refusedFor(error);
  }
  try {
    const ca =
      resealed &&
      (resealed.unopened.length > 0
        ? { resealed: false, unopened: true as const }
        : { resealed: resealed.resealed === 1 });
    const caCode = ca?.unopened ? ('vault_unopened' as const) : undefined;
    if (target === '') return { ...(caCode && { code: caCode }), ...(ca && { ca }) };
    const request = { node: target, module: '', yes: false };
    const opened = await openAct(REKEY, request, deps, { actor: deps.actor, via: 'cli', line: {} });
    if (opened.kind !== 'ready') return refused(opened.refusal);
    const ran = await opened.run();
    const code = ran.refusal?.code ?? caCode;
    return { ran, ...(code && { code }), ...(ca && { ca }) };
  } finally {
    await deps.stores.close();
  }
};
