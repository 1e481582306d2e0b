/**
 * The kinds of key berth mints and reads back: each a key pair of one algorithm and size,
 * named as a definition names it. Apart from the code that makes them, so that a schema
 * can name the kinds without loading jose.
 */
export const KEY_KINDS = ['ec-p256', 'ed25519', 'rsa-3072'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export function isKeyKind(text: string): text is KeyKind {
  return (KEY_KINDS as readonly string[]).includes(text);
}

/**
 * The JWS algorithm each kind signs with, as its JWK's `alg` says: what an issuer that
 * signs tokens with the key publishes.
 */
export const KEY_ALGORITHMS: Record<KeyKind, 'ES256' | 'EdDSA' | 'RS256'> = {
  'ec-p256': 'ES256',
  ed25519: 'EdDSA',
  'rsa-3072': 'RS256',
};

/** The kinds of secret that are keys: a key pair, or a key and its certificate (`tls`). */
export const KEY_SECRET_KINDS = [...KEY_KINDS, 'tls'] as const;
export type KeySecretKind = (typeof KEY_SECRET_KINDS)[number];

/** A `tls` secret's certificate lives this many days when its definition says not. */
export const TLS_DAYS = 90;

/** The longest a `tls` secret's certificate may live, as its definition's `days`. */
export const TLS_DAYS_MOST = 3650;

/** Every kind of secret a definition names: `random` (minted bytes, the default), or a key. */
export const SECRET_KINDS = ['random', ...KEY_SECRET_KINDS] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

export function isKeySecretKind(text: string | undefined): text is KeySecretKind {
  return text !== undefined && (KEY_SECRET_KINDS as readonly string[]).includes(text);
}
