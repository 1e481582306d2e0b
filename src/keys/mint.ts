/**
 * Minting a secret that is a key: a key pair of a kind, or (`tls`) a key and its
 * certificate signed by the state's CA. What the vault keeps is `pem`; the rest is what
 * templates read of it. The certificate's library is loaded only for a `tls` secret.
 */

import type { JWK } from 'jose';
import { once } from '../utils/once.ts';
import type { CertifiedKey } from './certificate.ts';
import { mintKeyPair, readFoundKey } from './key-pair.ts';
import { type KeySecretKind, TLS_DAYS } from './kinds.ts';

export interface MintedKey {
  /** The private key, PKCS #8 PEM. */
  pem: string;
  publicPem: string;
  jwk: JWK;
  kid: string;
  /** A `tls` secret's certificate, PEM. */
  certificate?: string;
}

export interface MintOptions {
  /** The state's CA, for a `tls` secret (see state-ca.ts). */
  ca?: CertifiedKey;
  /** A `tls` secret's DNS names and addresses. */
  names?: readonly string[];
  /** A `tls` secret's certificate's lifetime; TLS_DAYS when not given. */
  days?: number;
  now?: Date;
}

const loadCertificates = once(() => import('./certificate.ts'));

/** A new secret of the kind. A `tls` secret needs the CA and its names (a TypeError says so). */
export async function mintKeySecret(
  kind: KeySecretKind,
  options: MintOptions = {},
): Promise<MintedKey> {
  if (kind !== 'tls') {
    const { pem, publicPem, jwk, kid } = await mintKeyPair(kind);
    return { pem, publicPem, jwk, kid };
  }
  if (!options.ca)
    throw new TypeError("a tls secret is signed by the state's CA, and none was given");
  const { issueCertificate } = await loadCertificates();
  const issued = await issueCertificate(options.ca, {
    names: options.names ?? [],
    days: options.days ?? TLS_DAYS,
    now: options.now,
  });
  const found = await readFoundKey(issued.key);
  if (!('key' in found))
    throw new Error(`berth cannot read the key it made: ${found.refused.words}`);
  const { publicPem, jwk, kid } = found.key;
  return { pem: issued.key, publicPem, jwk, kid, certificate: issued.certificate };
}
