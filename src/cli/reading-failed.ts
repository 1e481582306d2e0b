import { ConfigError } from '../config/config.ts';
import { storesCannotOpen } from '../stores/stores.ts';
import { EXIT, type Io } from './io.ts';

/** A reading command that could not read: berth.json's words (exit 1), or the stores' (exit 3). */
export function readingFailed(error: unknown, io: Io): number {
  if (error instanceof ConfigError) {
    io.err(error.message);
    return EXIT.refused;
  }
  io.err(storesCannotOpen(error));
  return EXIT.stores;
}
