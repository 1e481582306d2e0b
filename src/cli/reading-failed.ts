import { ConfigError } from '../config/config.ts';
import { storesCannotOpen } from '../stores/stores.ts';
import { EXIT, type Io } from './io.ts';

/**
 * A command that could not read: berth.json's words (exit 1), or the stores' (exit 3);
 * with `--json`, the same words as `{"refused": …}` on standard output too.
 */
export function readingFailed(error: unknown, io: Io, { json = false } = {}): number {
  const config = error instanceof ConfigError;
  const refused = config ? error.message : storesCannotOpen(error);
  io.err(refused);
  if (json) io.out(JSON.stringify({ refused }));
  return config ? EXIT.refused : EXIT.stores;
}
