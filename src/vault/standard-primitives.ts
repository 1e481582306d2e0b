/**
 * age's primitives from the standards: Web Crypto's X25519 (each call a job on another
 * thread, so every one is awaited) and @noble's ChaCha20-Poly1305, HKDF and HMAC over
 * SHA-256, the ones age-encryption uses. Any runtime with Web Crypto runs them (Deno too).
 */
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  type AgePrimitives,
  exchangingWith,
  type X25519Private,
  type X25519Public,
} from './age-primitives.ts';

/** Web Crypto's key, as both Node's types and the DOM's know it. */
type WebKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const X25519 = { name: 'X25519' } as const;
/** A PKCS #8 X25519 private key is this prefix and the key's 32 bytes (RFC 8410). */
const PKCS8_X25519 = [
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
];
/** The X25519 base point: a scalar times it is that scalar's public key. */
const BASE_POINT = new Uint8Array(32);
BASE_POINT[0] = 9;

/** The Web Crypto key of each public key made here. */
const keys = new WeakMap<X25519Public, WebKey>();

async function x25519Public(bytes: Uint8Array): Promise<X25519Public> {
  const own = new Uint8Array(bytes);
  const made = { bytes: own };
  keys.set(made, await crypto.subtle.importKey('raw', own, X25519, false, []));
  return made;
}

function privateOf(key: WebKey, publicKey: Uint8Array): X25519Private {
  return exchangingWith(
    publicKey,
    keys,
    async (peer) =>
      new Uint8Array(
        await crypto.subtle
          .deriveBits({ name: 'X25519', public: peer }, key, 256)
          // Node's Web Crypto refuses an all-zero result.
          .catch(() => new ArrayBuffer(32)),
      ),
  );
}

export const standardPrimitives: AgePrimitives = {
  random: (length) => crypto.getRandomValues(new Uint8Array(length)),
  x25519Public,
  async x25519Private(scalar) {
    const key = await crypto.subtle.importKey(
      'pkcs8',
      new Uint8Array([...PKCS8_X25519, ...scalar]),
      X25519,
      false,
      ['deriveBits'],
    );
    const publicKey = await privateOf(key, BASE_POINT).exchange(await x25519Public(BASE_POINT));
    if (publicKey === undefined) throw new Error('not an X25519 key');
    return privateOf(key, publicKey);
  },
  async x25519Generate() {
    const pair = (await crypto.subtle.generateKey(X25519, false, ['deriveBits'])) as {
      publicKey: WebKey;
      privateKey: WebKey;
    };
    const raw = await crypto.subtle.exportKey('raw', pair.publicKey);
    return privateOf(pair.privateKey, new Uint8Array(raw));
  },
  seal: (key, nonce, plain) => chacha20poly1305(key, nonce).encrypt(plain),
  open(key, nonce, sealed) {
    try {
      return chacha20poly1305(key, nonce).decrypt(sealed);
    } catch {
      return undefined;
    }
  },
  hkdf: (secret, salt, info, length) => hkdf(sha256, secret, salt, info, length),
  hmac: (key, data) => hmac(sha256, key, data),
};
