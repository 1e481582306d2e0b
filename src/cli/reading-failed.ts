import { ConfigError } from '../config/config.ts';
import { enveloped } from '../result.ts';
import { storesCannotOpen, storesCode } from '../stores/stores.ts';
import type { VaultError } from '../vault/seal.ts';
import { EXIT, type Io } from './io.ts';

/**
 * A command that could not read: berth.json's words (exit 1), or the stores' (exit 3);
 * with `--json`, the same words as `{"refused": …}` on standard output too.
 */
export function readingFailed(error: unknown, io: Io, { json = false } = {}): number {
  const config = error instanceof ConfigError;
  const refused = config ? error.message : storesCannotOpen(error);
  io.err(refused);
  const code = config ? 'invalid_config' : storesCode(error);
  if (json) io.out(JSON.stringify(enveloped({ refused, code })));
  return config ? EXIT.refused : EXIT.stores;
}

/** A value that cannot be sealed or opened, as `berth ca` and `berth rekey` refuse it. */
export function vaultRefused(error: VaultError, io: Io, json: boolean): number {
  io.err(error.message);
  if (json) io.out(JSON.stringify(enveloped({ refused: error.message, code: 'vault_unopened' })));
  return EXIT.refused;
}
