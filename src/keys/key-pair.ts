/**
 * Key pairs berth mints into the vault, and keys found on a node read back: a private key
 * as PEM (PKCS #8), its public key as SPKI PEM and as a JWK, and the JWK's `kid`, its
 * RFC 7638 thumbprint, so a new key is a new kid. Standards only: Web Crypto, through jose.
 */

import {
  type CryptoKey,
  calculateJwkThumbprint,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  type JWK,
} from 'jose';
import { KEY_ALGORITHMS, type KeyKind } from './kinds.ts';
import { type PemBlock, pemBlocks } from './pem.ts';

/** A key's public half, as templates and issuers need it. */
export interface PublicKey {
  kind: KeyKind;
  /** SPKI PEM, `BEGIN PUBLIC KEY`. */
  publicPem: string;
  /** The public key as a JWK, with its `kid`, its `alg` and `use: sig`. */
  jwk: JWK;
  /** The JWK's thumbprint (RFC 7638, SHA-256, base64url). */
  kid: string;
}

/** A key pair: its private key, PEM (PKCS #8, ending with a newline), with its public half. */
export interface KeyPair extends PublicKey {
  pem: string;
}

/** Why a found key is not one berth keeps, as a tag, with the words for the operator. */
export type FoundKeyReason = 'no-private-key' | 'several-keys' | 'encrypted' | 'other-kind';
export type FoundKey = { key: PublicKey } | { refused: { reason: FoundKeyReason; words: string } };

const GENERATE_OPTIONS: Record<KeyKind, { crv?: string; modulusLength?: number }> = {
  'ec-p256': {},
  ed25519: { crv: 'Ed25519' },
  'rsa-3072': { modulusLength: 3072 },
};

/** A new key pair of the kind, made by Web Crypto's generator. */
export async function mintKeyPair(kind: KeyKind): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(KEY_ALGORITHMS[kind], {
    ...GENERATE_OPTIONS[kind],
    extractable: true,
  });
  return { pem: `${await exportPKCS8(privateKey)}\n`, ...(await publicOf(kind, publicKey)) };
}

/** What berth says a key of each kind is, in a refusal. */
const KINDS_KEPT = 'berth keeps ec-p256, ed25519 and rsa-3072 keys';

/**
 * A PEM private key as found on a node (or kept in the vault) read back: its kind and its
 * public half. PKCS #8 (`BEGIN PRIVATE KEY`), and OpenSSL's traditional `BEGIN EC PRIVATE
 * KEY` and `BEGIN RSA PRIVATE KEY`, are read; a key of another kind, an encrypted one, or
 * text that holds no key or more than one, is refused in words.
 */
export async function readFoundKey(text: string): Promise<FoundKey> {
  const blocks = pemBlocks(text).filter((block) => block.label.endsWith('PRIVATE KEY'));
  if (blocks.length === 0)
    return refused(
      'no-private-key',
      `it holds no PEM private key (BEGIN PRIVATE KEY, BEGIN EC PRIVATE KEY or BEGIN RSA PRIVATE KEY); ${KINDS_KEPT}`,
    );
  if (blocks.length > 1)
    return refused('several-keys', `it holds ${blocks.length} private keys, where berth reads one`);
  const block = blocks[0] as PemBlock;
  if (block.headers || block.label === 'ENCRYPTED PRIVATE KEY')
    return refused(
      'encrypted',
      'its private key is encrypted with a passphrase; berth keeps keys that a service reads without one',
    );
  const der = await pkcs8Of(block);
  for (const [kind, params] of KIND_PARAMS) {
    const key = der && (await importPrivate(der, params));
    if (!key) continue;
    const bits = (key.algorithm as { modulusLength?: number }).modulusLength;
    if (bits !== undefined && bits !== 3072)
      return refused('other-kind', `it is an RSA key of ${bits} bits; ${KINDS_KEPT}`);
    return { key: await publicOf(kind, await publicHalf(key, params)) };
  }
  for (const [curve, params] of OTHER_CURVES)
    if (der && (await importPrivate(der, params)))
      return refused('other-kind', `it is an EC key on ${curve}; ${KINDS_KEPT}`);
  return refused('other-kind', `it is not a private key berth reads; ${KINDS_KEPT}`);
}

function refused(reason: FoundKeyReason, words: string): FoundKey {
  return { refused: { reason, words } };
}

/** Web Crypto's import parameters, as the global `crypto` types them on every runtime. */
type Params = Parameters<typeof crypto.subtle.importKey>[2];

/** Each kind's Web Crypto parameters, tried in turn. */
const KIND_PARAMS: [KeyKind, Params][] = [
  ['ec-p256', { name: 'ECDSA', namedCurve: 'P-256' }],
  ['ed25519', { name: 'Ed25519' }],
  ['rsa-3072', { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }],
];

/** Curves berth does not keep, named when met. */
const OTHER_CURVES: [string, Params][] = [
  ['P-384', { name: 'ECDSA', namedCurve: 'P-384' }],
  ['P-521', { name: 'ECDSA', namedCurve: 'P-521' }],
];

function importPrivate(
  der: Uint8Array<ArrayBuffer>,
  params: Params,
): Promise<CryptoKey | undefined> {
  return crypto.subtle.importKey('pkcs8', der, params, true, ['sign']).catch(() => undefined);
}

/** The public half of a private key: its JWK less the private members, imported again. */
async function publicHalf(key: CryptoKey, params: Params): Promise<CryptoKey> {
  const { kty, crv, x, y, n, e } = await crypto.subtle.exportKey('jwk', key);
  return crypto.subtle.importKey('jwk', { kty, crv, x, y, n, e }, params, true, ['verify']);
}

async function publicOf(kind: KeyKind, publicKey: CryptoKey): Promise<PublicKey> {
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    kind,
    // Ended with a newline, as OpenSSL ends the files it writes.
    publicPem: `${await exportSPKI(publicKey)}\n`,
    jwk: { ...jwk, kid, alg: KEY_ALGORITHMS[kind], use: 'sig' },
    kid,
  };
}

const OID = {
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecPublicKey: '1.2.840.10045.2.1',
};

/**
 * A private key's PKCS #8 bytes: as they are, or OpenSSL's traditional forms (PKCS #1
 * for RSA, SEC 1 for EC) wrapped as PKCS #8 says, by asn1js (loaded only for them).
 */
async function pkcs8Of(block: PemBlock): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (block.label === 'PRIVATE KEY') return block.der;
  if (block.label !== 'RSA PRIVATE KEY' && block.label !== 'EC PRIVATE KEY') return undefined;
  const asn1 = await import('asn1js');
  let parameters: InstanceType<typeof asn1.Null> | InstanceType<typeof asn1.ObjectIdentifier>;
  let algorithm: string;
  if (block.label === 'RSA PRIVATE KEY') {
    algorithm = OID.rsaEncryption;
    parameters = new asn1.Null();
  } else {
    // SEC 1's ECPrivateKey names its curve in its [0] parameters.
    const parsed = asn1.fromBER(block.der).result;
    const fields = parsed instanceof asn1.Sequence ? parsed.valueBlock.value : [];
    const named = fields.find(
      (field) => field.idBlock.tagClass === 3 && field.idBlock.tagNumber === 0,
    );
    const curve = named instanceof asn1.Constructed ? named.valueBlock.value[0] : undefined;
    if (!(curve instanceof asn1.ObjectIdentifier)) return undefined;
    algorithm = OID.ecPublicKey;
    parameters = curve;
  }
  const info = new asn1.Sequence({
    value: [
      new asn1.Integer({ value: 0 }),
      new asn1.Sequence({ value: [new asn1.ObjectIdentifier({ value: algorithm }), parameters] }),
      new asn1.OctetString({ valueHex: block.der }),
    ],
  });
  return new Uint8Array(info.toBER());
}
