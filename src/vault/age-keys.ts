/**
 * age's X25519 keys as text: a recipient `age1…` (a public key) and an identity
 * `AGE-SECRET-KEY-1…` (a private scalar), both bech32, as age-keygen writes them.
 */
import { bech32 } from '@scure/base';
import type { AgePrimitives, X25519Private, X25519Public } from './age-primitives.ts';

/** A recipient, its public key made ready once for every file sealed to it. */
export type X25519Recipient = X25519Public;

/** An identity, made ready once; its `publicKey` is its own recipient's bytes. */
export type X25519Identity = X25519Private;

/** The 32 bytes of a bech32 key under `prefix` (in either case, one throughout), or undefined. */
function keyBytes(text: string, prefix: string): Uint8Array | undefined {
  try {
    const key = bech32.decodeToBytes(text);
    return key.prefix === prefix && key.bytes.length === 32 ? key.bytes : undefined;
  } catch {
    return undefined;
  }
}

/** The public key of a recipient `age1…`, or undefined when it is not one. */
export const recipientBytes = (text: string) => keyBytes(text, 'age');

export function importRecipient(text: string, primitives: AgePrimitives): Promise<X25519Recipient> {
  const bytes = recipientBytes(text);
  if (!bytes) throw new Error(`${text} is not an age recipient`);
  return primitives.x25519Public(bytes);
}

export function importIdentity(text: string, primitives: AgePrimitives): Promise<X25519Identity> {
  const bytes = keyBytes(text, 'age-secret-key-');
  if (!bytes) throw new Error('not an AGE-SECRET-KEY-1… identity');
  return primitives.x25519Private(bytes);
}

/** The recipient of an identity: `age1…`. */
export async function recipientOf(identity: string, primitives: AgePrimitives): Promise<string> {
  return bech32.encodeFromBytes('age', (await importIdentity(identity, primitives)).publicKey);
}

/** A new identity: a random scalar, as age-keygen spells it. */
export function newIdentity(): string {
  const scalar = crypto.getRandomValues(new Uint8Array(32));
  return bech32.encodeFromBytes('AGE-SECRET-KEY-', scalar).toUpperCase();
}
