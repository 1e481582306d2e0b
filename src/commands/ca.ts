import * as v from 'valibot';
import { FORMAT_VERSION } from '../model/result.ts';
import type { AnswerFunction } from './command-shape.ts';
import { RefusedSchema, refusedFor } from './reading-answer.ts';
import { stateCa } from './state-ca.ts';

/** The state's CA certificate (PEM), since when, and whether this berth made it now. */
export const CaAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    format_version: v.literal(FORMAT_VERSION),
    certificate: v.string(),
    at: v.string(),
    made: v.boolean(),
  }),
]);
export type CaAnswer = v.InferOutput<typeof CaAnswerSchema>;

/**
 * `berth ca`: the state's CA certificate, for the clients that are to trust the
 * certificates it signs. A state with none gets one made first, as at any first need:
 * that seals its key to berth.json's recipients and needs no identity, and a CA kept
 * already is read needing none at all (the certificate is public).
 */
export const ca: AnswerFunction<CaAnswer> = async (_asked, deps) => {
  try {
    await deps.stores.open();
    const { ca: kept, made } = await stateCa(deps.stores, { actor: deps.actor, via: 'cli' });
    return { format_version: FORMAT_VERSION, certificate: kept.certificate, at: kept.at, made };
  } catch (error) {
    return refusedFor(error);
  } finally {
    await deps.stores.close().catch(() => {});
  }
};
