import { fileConfig } from '../config/file-config.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { exitOf } from '../model/codes.ts';
import { enveloped } from '../model/result.ts';
import { checkStoreUrl } from '../model/store-url.ts';
import { copyStateTo } from '../stores/copy-state.ts';
import { storesCannotOpen, storesCode } from '../stores/stores.ts';
import { processSeal } from '../vault/process-seal.ts';
import { EXIT, type Io, UsageError } from './io.ts';

/**
 * `berth copy-state --to URL`: the state directory's records into an empty PostgreSQL
 * store. Exits 0 once copied, 1 when the store is not empty, 2 for a URL that is not a
 * store's (or carries a password), 3 when either side cannot be opened.
 */
export async function runCopyState(
  to: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
): Promise<number> {
  if (!to)
    throw new UsageError(
      'berth copy-state needs --to URL: the PostgreSQL store to copy into, postgresql://USER@HOST[:PORT]/DATABASE',
    );
  // A URL berth cannot take is the caller's to mend, like a missing --to; never said back.
  const refused = checkStoreUrl(to);
  if (refused) throw new UsageError(`berth copy-state --to: ${refused}`);
  try {
    // Sealed to berth.json's recipients, should an earlier berth's vault be met on the way.
    const loadConfig = fileConfig(location.dir);
    const seal = processSeal(io.env, async () => (await loadConfig([])).settings.recipients);
    const outcome = await copyStateTo(location, to, seal);
    if (json)
      io.out(
        JSON.stringify(
          'refused' in outcome
            ? enveloped({ refused: outcome.refused, code: 'store_not_empty' })
            : enveloped({ said: outcome.done }),
        ),
      );
    if ('refused' in outcome) {
      if (!json) io.err(outcome.refused);
      return exitOf('store_not_empty');
    }
    if (!json) io.out(outcome.done);
    return EXIT.done;
  } catch (error) {
    const refused = storesCannotOpen(error);
    if (json) io.out(JSON.stringify(enveloped({ refused, code: storesCode(error) })));
    else io.err(refused);
    return exitOf(storesCode(error));
  }
}
