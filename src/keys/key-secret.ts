/**
 * A key secret's value read back, as a plan and an act need it: its key's kind, public
 * half and kid, and a `tls` secret's certificate with what it is for and until when; or
 * why it is not a key of the secret's kind, in words with a tag. The certificate's
 * library is loaded only for a `tls` secret.
 */

import type { JWK } from 'jose';
import { once } from '../utils/once.ts';
import { readFoundKey } from './key-pair.ts';
import type { KeyKind, KeySecretKind } from './kinds.ts';
import { endedByNewline, keyValueBytes, keyValueOf } from './secret-value.ts';

/** A key secret as a template places it and a plan compares it. */
export interface KeyRead {
  /** The key's own kind: a `tls` secret's key is any of them. */
  keyKind: KeyKind;
  /** The private key, PEM, ending with a newline: `{{secret NAME}}`. */
  pem: string;
  publicPem: string;
  jwk: JWK;
  kid: string;
  /** A `tls` secret's certificate: `{{cert NAME}}`, and what renewal reads of it. */
  certificate?: {
    pem: string;
    names: string[];
    notBefore: Date;
    notAfter: Date;
    /** In the last third of its life (or past it) at the time it was read for. */
    due: boolean;
  };
}

/** Why a value is not a key of its secret's kind, as a tag, with the words for the operator. */
export interface KeyRefused {
  refused: {
    reason: 'not-a-key' | 'other-kind' | 'no-certificate' | 'not-a-certificate' | 'other-key';
    words: string;
    /** The key's kid, when the key was read and its certificate was what is refused. */
    kid?: string;
  };
}

const loadCertificates = once(() => import('./certificate.ts'));

/**
 * A key secret's value read: a key of `kind` (for `tls`, any kind berth keeps, and its
 * certificate for that very key, with whether it is due for renewal at `now`).
 */
export async function readKeySecret(
  value: Uint8Array,
  kind: KeySecretKind,
  now = new Date(),
): Promise<KeyRead | KeyRefused> {
  const { key, certificate } = keyValueOf(value);
  const found = await readFoundKey(key);
  if ('refused' in found)
    return {
      refused: {
        reason: found.refused.reason === 'other-kind' ? 'other-kind' : 'not-a-key',
        words: found.refused.words,
      },
    };
  if (kind !== 'tls' && found.key.kind !== kind)
    return {
      refused: {
        reason: 'other-kind',
        words: `it is an ${found.key.kind} key, where the secret is of kind ${kind}`,
      },
    };
  const read: KeyRead = {
    keyKind: found.key.kind,
    pem: endedByNewline(key),
    publicPem: found.key.publicPem,
    jwk: found.key.jwk,
    kid: found.key.kid,
  };
  if (kind !== 'tls') return read;
  const { kid } = read;
  if (certificate === undefined)
    return { refused: { reason: 'no-certificate', words: 'it has no certificate', kid } };
  const { readCertificate, renewalDue } = await loadCertificates();
  const cert = readCertificate(certificate);
  if ('refused' in cert)
    return {
      refused: { reason: 'not-a-certificate', words: `its certificate: ${cert.refused}`, kid },
    };
  if (cert.publicPem.replace(/\s+/g, '') !== read.publicPem.replace(/\s+/g, ''))
    return {
      refused: {
        reason: 'other-key',
        words: `its certificate (${cert.subject || cert.names.join(', ')}) is for another key`,
        kid,
      },
    };
  return {
    ...read,
    certificate: {
      pem: endedByNewline(certificate),
      names: cert.names,
      notBefore: cert.notBefore,
      notAfter: cert.notAfter,
      due: renewalDue(cert, now),
    },
  };
}

/** A key (and certificate) found on a node, in its files, as the vault would keep it. */
export function foundKeyValue(key: Uint8Array, certificate?: Uint8Array): Uint8Array {
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return keyValueBytes(decode(key), certificate === undefined ? undefined : decode(certificate));
}
