/**
 * Base64 (RFC 4648 §4) as age writes it, padded in the armor and unpadded in a header, and
 * read as strictly: only the one canonical spelling of some bytes is read (no whitespace,
 * no padding where none belongs, no bits set past the last byte). On the platform's atob
 * and btoa, native in Node and Deno: a library of its own, kept out of the start, cost a
 * sealing process 10 ms to load.
 */

const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const PADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNPADDED = /^(?:[A-Za-z0-9+/]{4})*[A-Za-z0-9+/]{0,3}$/;

export function encode64(bytes: Uint8Array, { padded }: { padded: boolean }): string {
  let binary = '';
  // A character a byte, so many bytes a call: a call takes only so many arguments.
  for (let at = 0; at < bytes.length; at += 0x2000)
    binary += String.fromCharCode.apply(null, bytes.subarray(at, at + 0x2000) as never);
  const text = btoa(binary);
  return padded ? text : text.replace(/=+$/, '');
}

/** The bytes `text` spells canonically, or undefined. */
export function decode64(text: string, { padded }: { padded: boolean }): Uint8Array | undefined {
  if (!(padded ? PADDED : UNPADDED).test(text)) return undefined;
  const digits = text.replace(/=+$/, '');
  // One digit left over spells no byte; the bits of a last digit past the last byte are zero.
  const left = digits.length % 4;
  if (left === 1) return undefined;
  const unused = left === 2 ? 0b1111 : left === 3 ? 0b11 : 0;
  if (DIGITS.indexOf(digits.at(-1) ?? 'A') & unused) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let at = 0; at < binary.length; at++) bytes[at] = binary.charCodeAt(at);
  return bytes;
}
