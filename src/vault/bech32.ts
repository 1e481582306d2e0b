/**
 * Bech32 (BIP 173), the text of age's keys: `age1…` and `AGE-SECRET-KEY-1…`. As age reads
 * it: one case throughout, the checksum of the lower-case form, no bits left over past the
 * last byte, and no limit of 90 characters (age's own keys are shorter; its newer ones are
 * not).
 */

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function polymod(values: readonly number[]): number {
  let check = 1;
  for (const value of values) {
    const top = check >>> 25;
    check = ((check & 0x1ffffff) << 5) ^ value;
    for (let bit = 0; bit < 5; bit++) if ((top >>> bit) & 1) check ^= GENERATOR[bit] as number;
  }
  return check;
}

/** The prefix's part in the checksum: each character's high bits, a zero, its low bits. */
function expanded(prefix: string): number[] {
  const codes = [...prefix].map((char) => char.charCodeAt(0));
  return [...codes.map((code) => code >> 5), 0, ...codes.map((code) => code & 31)];
}

/** `values` of `from` bits regrouped in `to` bits; undefined when bits would be lost or made up. */
function regrouped(values: Iterable<number>, from: number, to: number, pad: boolean) {
  const out: number[] = [];
  let held = 0;
  let bits = 0;
  for (const value of values) {
    held = (held << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((held >>> bits) & ((1 << to) - 1));
    }
    held &= (1 << bits) - 1;
  }
  if (pad) {
    if (bits > 0) out.push((held << (to - bits)) & ((1 << to) - 1));
  } else if (bits >= from || held !== 0) return undefined;
  return out;
}

/** `bytes` under `prefix`, in lower case. */
export function encodeBech32(prefix: string, bytes: Uint8Array): string {
  const lower = prefix.toLowerCase();
  const data = regrouped(bytes, 8, 5, true) as number[];
  const check = polymod([...expanded(lower), ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = [0, 1, 2, 3, 4, 5].map((at) => (check >>> (5 * (5 - at))) & 31);
  return `${lower}1${[...data, ...checksum].map((value) => CHARSET[value]).join('')}`;
}

/** The prefix (lower case) and bytes of a bech32 text, or undefined when it is not one. */
export function decodeBech32(text: string): { prefix: string; bytes: Uint8Array } | undefined {
  const lower = text.toLowerCase();
  if (text !== lower && text !== text.toUpperCase()) return undefined;
  const split = lower.lastIndexOf('1');
  if (split < 1 || split + 7 > lower.length) return undefined;
  const prefix = lower.slice(0, split);
  if ([...prefix].some((char) => char < '!' || char > '~')) return undefined;
  const data = [...lower.slice(split + 1)].map((char) => CHARSET.indexOf(char));
  if (data.includes(-1) || polymod([...expanded(prefix), ...data]) !== 1) return undefined;
  const bytes = regrouped(data.slice(0, -6), 5, 8, false);
  return bytes && { prefix, bytes: Uint8Array.from(bytes) };
}
