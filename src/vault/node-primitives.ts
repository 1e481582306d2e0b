/**
 * age's primitives from node:crypto, in berth's Node process: every one synchronous, on
 * OpenSSL. Web Crypto's X25519 is a job on the thread pool for each key made, imported,
 * exported or exchanged, and @noble's ciphers are JavaScript; a converge of 100 secrets
 * paid more for that than for the rest of its work on them.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  type KeyObject,
  randomFillSync,
} from 'node:crypto';
import {
  type AgePrimitives,
  exchangingWith,
  type X25519Private,
  type X25519Public,
} from './age-primitives.ts';

const TAG = 16;

/**
 * Random bytes drawn 4 KiB at a time: each draw from OpenSSL cost as much as the rest of
 * sealing a value but its exchange. A byte handed out is zeroed in the pool.
 */
const pool = Buffer.alloc(4096);
let drawn = pool.length;
function random(length: number): Uint8Array {
  if (length > pool.length) return randomFillSync(new Uint8Array(length));
  if (drawn + length > pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  const bytes = new Uint8Array(pool.subarray(drawn, drawn + length));
  pool.fill(0, drawn, drawn + length);
  drawn += length;
  return bytes;
}

const hmac = (key: Uint8Array, data: Uint8Array) => createHmac('sha256', key).update(data).digest();

const NO_SALT = new Uint8Array(32);

/**
 * HKDF-SHA-256 (RFC 5869) from two HMACs a block: hkdfSync makes a KeyObject of every
 * secret, and cost as much as the X25519 exchange.
 */
function hkdf(secret: Uint8Array, salt: Uint8Array | undefined, info: Uint8Array, length: number) {
  const key = hmac(salt ?? NO_SALT, secret);
  const okm = new Uint8Array(Math.ceil(length / 32) * 32);
  let block: Uint8Array = new Uint8Array(0);
  for (let at = 0, counter = 1; at < length; at += 32, counter++) {
    const input = new Uint8Array(block.length + info.length + 1);
    input.set(block);
    input.set(info, block.length);
    input[input.length - 1] = counter;
    block = hmac(key, input);
    okm.set(block, at);
  }
  return okm.subarray(0, length);
}

/** The KeyObject of each public key made here. */
const keys = new WeakMap<X25519Public, KeyObject>();

/** A key's public 32 bytes. */
const rawOf = (key: KeyObject) =>
  Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url');

function privateOf(key: KeyObject, publicKey: Uint8Array): X25519Private {
  return exchangingWith(publicKey, keys, (peer) => {
    try {
      return diffieHellman({ privateKey: key, publicKey: peer });
    } catch {
      return undefined; // OpenSSL refuses an all-zero result.
    }
  });
}

export const nodePrimitives: AgePrimitives = {
  random,
  async x25519Public(bytes) {
    const made = { bytes: new Uint8Array(bytes) };
    const x = Buffer.from(made.bytes).toString('base64url');
    keys.set(made, createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' }));
    return made;
  },
  async x25519Private(scalar) {
    // From a JWK, not PKCS #8 (OpenSSL's decoders took 0.4 ms a key). Node reads `d`
    // alone for a private key and derives its public key, which the export then gives.
    const d = Buffer.from(scalar).toString('base64url');
    const key = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d, x: '' }, format: 'jwk' });
    return privateOf(key, rawOf(key));
  },
  // A random scalar made a key: cheaper than generateKeyPairSync and its own draw.
  x25519Generate: () => nodePrimitives.x25519Private(random(32)),
  seal(key, nonce, plain) {
    const cipher = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
    return Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  },
  open(key, nonce, sealed) {
    if (sealed.length < TAG) return undefined;
    const decipher = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    const plain = decipher.update(sealed.subarray(0, sealed.length - TAG));
    try {
      return Buffer.concat([plain, decipher.final()]);
    } catch {
      return undefined;
    }
  },
  hkdf,
  hmac,
};
