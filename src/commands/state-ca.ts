/**
 * The state's certificate authority: one a state, made at its first need (a `tls`
 * secret, `berth ca`), its key sealed in the stores as every value. Two berths that need
 * it at once each make one, and keep it only where none is kept (Stores.keepCa): the
 * first kept is the state's, and both go on with it. The making is journaled once, by
 * the berth whose CA was kept.
 */

import type { CertifiedKey } from '../keys/certificate.ts';
import type { JournalEntry, KeptCa, Stores } from '../stores/stores.ts';

/** Who needs the CA, as the journal names an act's actor. */
export interface Needing {
  actor: string;
  via: JournalEntry['via'];
}

/** The state's CA, made now if the state has none; `made` says this berth's was kept. */
export async function stateCa(
  stores: Pick<Stores, 'readCa' | 'keepCa' | 'journalUnplaced'>,
  who: Needing,
  now = new Date(),
): Promise<{ ca: KeptCa; made: boolean }> {
  const kept = await stores.readCa();
  if (kept) return { ca: kept, made: false };
  const { makeCa, readCertificate } = await import('../keys/certificate.ts');
  const made = await makeCa(now);
  const at = now.toISOString();
  const ca = await stores.keepCa({
    certificate: made.certificate,
    key: new TextEncoder().encode(made.key),
    at,
  });
  if (ca.certificate !== made.certificate) return { ca, made: false };
  const read = readCertificate(ca.certificate);
  const named =
    'refused' in read
      ? {}
      : { named: { subject: read.subject, until: read.notAfter.toISOString() } };
  await stores.journalUnplaced({
    at,
    actor: who.actor,
    via: who.via,
    act: 'ca',
    node: '',
    outcome: 'done',
    result: { command: 'ca', ...named },
  });
  return { ca, made: true };
}

/** The state's CA as a command reaches it: made at its first need, once a process. */
export interface StateCaAccess {
  /** The state's CA, made now if the state has none (and journaled so). */
  need(): Promise<KeptCa>;
}

/** The stores' CA for a command run by `who`, made when first needed. */
export function stateCaAccess(
  stores: Pick<Stores, 'readCa' | 'keepCa' | 'journalUnplaced'>,
  who: Needing,
  now: () => Date,
): StateCaAccess {
  let had: KeptCa | undefined;
  return {
    async need() {
      had ??= (await stateCa(stores, who, now())).ca;
      return had;
    },
  };
}

/** The CA with its key opened, to sign a `tls` secret: this needs berth's identity. */
export async function signingCa(ca: KeptCa): Promise<CertifiedKey> {
  return { certificate: ca.certificate, key: new TextDecoder().decode(await ca.key()) };
}
