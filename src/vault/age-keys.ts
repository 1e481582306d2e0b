/**
 * age's X25519 keys as text: a recipient `age1…` (a public key) and an identity
 * `AGE-SECRET-KEY-1…` (a private scalar), both bech32, as age-keygen writes them.
 */
import type { AgePrimitives, X25519Private, X25519Public } from './age-primitives.ts';
import { decodeBech32, encodeBech32 } from './bech32.ts';

/** A recipient, its public key made ready once for every file sealed to it. */
export type X25519Recipient = X25519Public;

/** An identity, made ready once; its `publicKey` is its own recipient's bytes. */
export type X25519Identity = X25519Private;

export function importRecipient(text: string, primitives: AgePrimitives): Promise<X25519Recipient> {
  const key = decodeBech32(text);
  if (key?.prefix !== 'age' || key.bytes.length !== 32)
    throw new Error(`${text} is not an age recipient`);
  return primitives.x25519Public(key.bytes);
}

export function importIdentity(text: string, primitives: AgePrimitives): Promise<X25519Identity> {
  const key = decodeBech32(text);
  if (key?.prefix !== 'age-secret-key-' || key.bytes.length !== 32)
    throw new Error('not an AGE-SECRET-KEY-1… identity');
  return primitives.x25519Private(key.bytes);
}

/** The recipient of an identity: `age1…`. */
export async function recipientOf(identity: string, primitives: AgePrimitives): Promise<string> {
  return encodeBech32('age', (await importIdentity(identity, primitives)).publicKey);
}

/** A new identity: a random scalar, as age-keygen spells it. */
export function newIdentity(): string {
  const scalar = crypto.getRandomValues(new Uint8Array(32));
  return encodeBech32('AGE-SECRET-KEY-', scalar).toUpperCase();
}
