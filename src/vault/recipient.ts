import { bech32 } from '@scure/base';

/**
 * Whether `text` is an age X25519 recipient (`age1…`, bech32 with 32 bytes, in one case
 * throughout) whose checksum holds: berth.json's recipients are checked when it is read,
 * so a mistyped character is said there, not at the first value sealed. @scure/base is
 * what age-encryption reads it with, without loading the whole library.
 */
export function isAgeRecipient(text: string): boolean {
  try {
    const key = bech32.decodeToBytes(text);
    return key.prefix === 'age' && key.bytes.length === 32;
  } catch {
    return false;
  }
}
