import { base64urlnopad, bech32 } from '@scure/base';

/** Web Crypto's key, as the global `crypto` types it on every runtime. */
type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/**
 * An identity (`AGE-SECRET-KEY-1…`) as a Web Crypto key, made once a process: given its
 * text, age-encryption imports the key anew for every value it opens (Web Crypto takes a
 * private X25519 key only as PKCS #8 or a JWK); given the key, it does not. The JWK needs
 * the public half too: the recipient's bytes. Where Web Crypto has no X25519, the text
 * stays, and age-encryption falls back to its own.
 */
export async function identityKey(identity: string, recipient: string): Promise<Key | string> {
  const jwk = {
    kty: 'OKP',
    crv: 'X25519',
    d: base64urlnopad.encode(bech32.decodeToBytes(identity).bytes),
    x: base64urlnopad.encode(bech32.decodeToBytes(recipient).bytes),
  };
  try {
    return await crypto.subtle.importKey('jwk', jwk, { name: 'X25519' }, false, ['deriveBits']);
  } catch {
    return identity;
  }
}
