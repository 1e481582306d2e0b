const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ALPHABET = /^[A-Za-z0-9_-]*$/;

/**
 * Whether `text` is base64url as RFC 7515 has a JWS spelled: its alphabet only, no
 * padding, no white space, and the one spelling of its bytes (no bit set in the last
 * character that no byte uses), so that decoding and encoding again gives `text`.
 */
export function isCanonicalBase64url(text: string): boolean {
  if (!ALPHABET.test(text)) return false;
  const tail = text.length % 4;
  if (tail === 1) return false;
  // 2 characters hold one byte and 4 spare bits; 3 characters hold two bytes and 2.
  const spare = tail === 2 ? 0b1111 : tail === 3 ? 0b11 : 0;
  return (DIGITS.indexOf(text.at(-1) ?? 'A') & spare) === 0;
}

/**
 * Whether a JWS in compact form is spelled canonically, every part of it. A decoder
 * that forgives padding, white space or spare bits (atob does) lets anyone holding
 * one token spell others that verify as well: berth takes only the one spelling.
 */
export function isCanonicalCompact(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every(isCanonicalBase64url);
}
