import { openingEach, type Seal } from '../vault/seal.ts';
import type { KeptCa, Resealed } from './stores.ts';

/** The state's CA as a store keeps it: its certificate and when, and its key sealed. */
export interface SealedCa {
  certificate: string;
  at: string;
  sealed: string;
}

/** How the CA's key is named in a refusal to open it. */
const WHAT = "key of the state's CA";

/** The kept CA, its key opened when first asked for (and again after a refusal). */
export function keptCa(found: SealedCa, seal: Seal): KeptCa {
  let opened: Uint8Array | undefined;
  return {
    certificate: found.certificate,
    at: found.at,
    async key() {
      opened ??= await seal.open(found.sealed, WHAT);
      return opened.slice();
    },
  };
}

/**
 * The CA's key sealed again to the recipients of now: the new sealed text, or none when
 * this identity cannot open it (named in `unopened`, and kept as it was).
 */
export async function resealedCa(
  found: SealedCa,
  seal: Seal,
): Promise<{ sealed: string | undefined; resealed: Resealed }> {
  const { unopened, tryOpen } = openingEach();
  const key = await tryOpen("the state's CA", () => seal.open(found.sealed, WHAT));
  const [sealed] = key === undefined ? [] : await seal.seal([key], async () => false);
  return { sealed, resealed: { resealed: key === undefined ? 0 : 1, unopened } };
}
