/**
 * Base64 (RFC 4648 §4) as age writes it, padded in the armor and unpadded in a header, and
 * read as strictly: only the one canonical spelling of some bytes is read (no whitespace,
 * no padding where none belongs, no bits set past the last byte). On the platform's atob
 * and btoa, native in Node and Deno: a library of its own, kept out of the start, cost a
 * sealing process 10 ms to load.
 */

const ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes as a binary string: a character each, from U+0000 to U+00FF. */
function binary(bytes: Uint8Array): string {
  let text = '';
  // A bounded spread: a call takes only so many arguments.
  for (let at = 0; at < bytes.length; at += 0x2000)
    text += String.fromCharCode(...bytes.subarray(at, at + 0x2000));
  return text;
}

export function encode64(bytes: Uint8Array, { padded }: { padded: boolean }): string {
  const text = btoa(binary(bytes));
  return padded ? text : text.replace(/=+$/, '');
}

/** The bytes `text` spells canonically, or undefined. */
export function decode64(text: string, { padded }: { padded: boolean }): Uint8Array | undefined {
  if (!ALPHABET.test(text)) return undefined;
  let decoded: string;
  try {
    decoded = atob(text);
  } catch {
    return undefined; // A length no bytes have.
  }
  const bytes = new Uint8Array(decoded.length);
  for (let at = 0; at < decoded.length; at++) bytes[at] = decoded.charCodeAt(at);
  // atob forgives missing padding and bits past the end; spelt again, they show.
  return encode64(bytes, { padded }) === text ? bytes : undefined;
}
