import * as v from 'valibot';
import { ConfigError } from '../config/config.ts';
import { type Code, CodeSchema } from '../model/codes.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import { storesCannotOpen, storesCode } from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';

/**
 * A reading's refusal (`status`, `log`, `nodes`, `modules`, `ca`, `rekey`, `secret`): the
 * one envelope every `--json` prints, with the words and the code, and nothing else.
 */
export const RefusedSchema = v.object({
  format_version: v.literal(FORMAT_VERSION),
  refused: v.string(),
  code: CodeSchema,
});
export type Refused = v.InferOutput<typeof RefusedSchema>;

export function refused(words: string, code: Code): Refused {
  return { format_version: FORMAT_VERSION, refused: words, code };
}

/**
 * A reading that could not be made: berth.json's words, or a value berth cannot open
 * (the command refused), or the stores' words (they could not be used).
 */
export function refusedFor(error: unknown): Refused {
  if (error instanceof ConfigError) return refused(error.message, 'invalid_config');
  if (error instanceof VaultError) return refused(error.message, 'vault_unopened');
  return refused(storesCannotOpen(error), storesCode(error));
}
