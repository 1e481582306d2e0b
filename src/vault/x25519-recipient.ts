import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64nopad, bech32 } from '@scure/base';
import { type Recipient, Stanza } from 'age-encryption';
import { isAgeRecipient } from './recipient.ts';

/** Web Crypto's key, as the global `crypto` types it on every runtime. */
type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const LABEL = new TextEncoder().encode('age-encryption.org/v1/X25519');

/**
 * An X25519 recipient (`age1…`) whose stanza is age's own (age-encryption.org/v1/X25519),
 * its ephemeral key made by Web Crypto. age-encryption's recipient hands Web Crypto the
 * ephemeral scalar as PKCS #8, twice a file (for the share, then the secret), and Node's
 * import of PKCS #8 costs four times the X25519 it stands for; a key Web Crypto generates
 * is never imported. Where Web Crypto has no X25519, or the text is no X25519 recipient,
 * the text is answered, for age-encryption's own recipient to seal to or refuse.
 */
export async function x25519Recipient(recipient: string): Promise<Recipient | string> {
  if (!isAgeRecipient(recipient)) return recipient;
  // A copy on an ArrayBuffer of its own, as Web Crypto types its input.
  const bytes = new Uint8Array(bech32.decodeToBytes(recipient).bytes);
  let peer: Key;
  try {
    peer = await crypto.subtle.importKey('raw', bytes, { name: 'X25519' }, false, []);
  } catch {
    return recipient;
  }
  return {
    async wrapFileKey(fileKey) {
      const ephemeral = (await crypto.subtle.generateKey({ name: 'X25519' }, false, [
        'deriveBits',
      ])) as { publicKey: Key; privateKey: Key };
      const [share, secret] = await Promise.all([
        crypto.subtle.exportKey('raw', ephemeral.publicKey),
        crypto.subtle.deriveBits({ name: 'X25519', public: peer }, ephemeral.privateKey, 256),
      ]);
      const salt = new Uint8Array(64);
      salt.set(new Uint8Array(share));
      salt.set(bytes, 32);
      const key = hkdf(sha256, new Uint8Array(secret), salt, LABEL, 32);
      // A key of its own for each file, so the zero nonce age's stanza uses is never reused.
      const body = chacha20poly1305(key, new Uint8Array(12)).encrypt(fileKey);
      return [new Stanza(['X25519', base64nopad.encode(new Uint8Array(share))], body)];
    },
  };
}
