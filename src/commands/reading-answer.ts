import * as v from 'valibot';
import { ConfigError } from '../config/config.ts';
import { CodeSchema } from '../model/codes.ts';
import type { Refusal } from '../model/refusal.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import { storesRefusal } from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';

/**
 * A reading's refusal (`status`, `log`, `nodes`, `modules`, `ca`, `rekey`, `secret`) as
 * `--json` prints it: the one envelope, with the words and the code, and nothing else.
 */
export const RefusedSchema = v.object({
  format_version: v.literal(FORMAT_VERSION),
  refused: v.string(),
  code: CodeSchema,
});
export type Refused = v.InferOutput<typeof RefusedSchema>;

/** A reading refused, as the command answers it: typed; the edge renders it as `Refused`. */
export interface RefusedReading {
  refusal: Refusal;
}

/** What a reading answers: its answer, or its refusal typed in place of the envelope. */
export type Reading<A> = Exclude<A, Refused> | RefusedReading;

export function refused(refusal: Refusal): RefusedReading {
  return { refusal };
}

/**
 * A reading that could not be made: berth.json's words, or a value berth cannot open
 * (the command refused), or the stores' words (they could not be used).
 */
export function refusedFor(error: unknown): RefusedReading {
  if (error instanceof ConfigError)
    return refused({ kind: 'config', code: 'invalid_config', message: error.message });
  if (error instanceof VaultError)
    return refused({ kind: 'vault', code: 'vault_unopened', message: error.message });
  return refused(storesRefusal(error));
}
