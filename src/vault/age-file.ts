/**
 * One age file (age-encryption.org/v1) sealed to X25519 recipients, and opened with X25519
 * identities, in memory. age-encryption's Encrypter and Decrypter do the same through web
 * streams, two Web Crypto imports of each ephemeral key, and a 64 KiB buffer a file; for
 * the vault's short values that machinery cost more than the cryptography (a converge of
 * 100 secrets paid 2–7× its unsealed cost). Here each file costs one X25519 exchange
 * (sealing: a generated ephemeral key; opening: the share against an identity made ready
 * once), HKDF, HMAC and ChaCha20-Poly1305, from the primitives the host gives
 * (age-primitives.ts). The reference `age` opens what this seals and the other way round
 * (tests/vault/age-file.test.ts, tests/vault/primitives.test.ts).
 */
import { base64nopad } from '@scure/base';
import type { X25519Identity, X25519Recipient } from './age-keys.ts';
import type { AgePrimitives } from './age-primitives.ts';

const ENCODER = new TextEncoder();
/** A header's bytes as text: any byte past ASCII makes a header line invalid anyway. */
const DECODER = new TextDecoder('latin1');
const ascii = (text: string) => ENCODER.encode(text);
const VERSION_LINE = 'age-encryption.org/v1';
const X25519_INFO = ascii('age-encryption.org/v1/X25519');
const HEADER_INFO = ascii('header');
const PAYLOAD_INFO = ascii('payload');
/** The payload is sealed in chunks of 64 KiB, each with a 16-byte Poly1305 tag. */
const CHUNK = 64 * 1024;
const TAG = 16;
/** A stanza's body is base64 in lines of 64 characters (48 bytes), the last one shorter. */
const BODY_LINE_BYTES = 48;

/** An opened file, or why it could not be: sealed to none of these identities, or not an age file. */
export type Opened = { value: Uint8Array } | { unmatched: true } | { broken: string };

/** The key that wraps a file key for one recipient, from the exchange and both public keys. */
function wrapKey(p: AgePrimitives, shared: Uint8Array, share: Uint8Array, recipient: Uint8Array) {
  const salt = new Uint8Array(64);
  salt.set(share);
  salt.set(recipient, 32);
  return p.hkdf(shared, salt, X25519_INFO, 32);
}

const ZERO_NONCE = new Uint8Array(12);

/** One X25519 stanza's lines: a new ephemeral key's share, and the file key wrapped. */
async function stanzaFor(
  p: AgePrimitives,
  recipient: X25519Recipient,
  fileKey: Uint8Array,
): Promise<string> {
  const ephemeral = await p.x25519Generate();
  const shared = await ephemeral.exchange(recipient);
  if (shared === undefined) throw new Error('the recipient is a low-order point');
  const share = ephemeral.publicKey;
  const body = p.seal(wrapKey(p, shared, share, recipient.bytes), ZERO_NONCE, fileKey);
  return `-> X25519 ${unpadded(share)}\n${unpadded(body)}\n`;
}

/** The nonce of a payload chunk: its counter, big-endian in 11 bytes, then 1 for the last. */
function chunkNonce(counter: number, last: boolean) {
  const nonce = new Uint8Array(12);
  for (let at = 10, rest = counter; at >= 7; at--, rest >>>= 8) nonce[at] = rest & 0xff;
  nonce[11] = last ? 1 : 0;
  return nonce;
}

function concat(parts: readonly Uint8Array[]) {
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/** `value` sealed as one binary age file to every recipient. */
export async function sealAge(
  value: Uint8Array,
  recipients: readonly X25519Recipient[],
  p: AgePrimitives,
): Promise<Uint8Array> {
  // The file key and the payload's nonce, drawn at once.
  const random = p.random(32);
  const fileKey = random.subarray(0, 16);
  const nonce = random.subarray(16);
  const stanzas = await Promise.all(
    recipients.map((recipient) => stanzaFor(p, recipient, fileKey)),
  );
  const header = ascii(`${VERSION_LINE}\n${stanzas.join('')}---`);
  const mac = p.hmac(p.hkdf(fileKey, undefined, HEADER_INFO, 32), header);
  const payloadKey = p.hkdf(fileKey, nonce, PAYLOAD_INFO, 32);
  const chunks: Uint8Array[] = [];
  const count = Math.max(1, Math.ceil(value.length / CHUNK));
  for (let index = 0; index < count; index++) {
    const nonceOf = chunkNonce(index, index === count - 1);
    const plain = value.subarray(index * CHUNK, (index + 1) * CHUNK);
    chunks.push(p.seal(payloadKey, nonceOf, plain));
  }
  return concat([header, ascii(` ${unpadded(mac)}\n`), nonce, ...chunks]);
}

interface Header {
  stanzas: { args: string[]; body: Uint8Array }[];
  /** The header up to and including `---`: what the MAC covers. */
  covered: Uint8Array;
  mac: Uint8Array;
  /** Where the payload's nonce begins. */
  end: number;
}

/** The header of a binary age file, parsed as strictly as the format says. */
function parseHeader(file: Uint8Array): Header | { broken: string } {
  let at = 0;
  const line = () => {
    const newline = file.indexOf(0x0a, at);
    if (newline < 0) return undefined;
    const text = DECODER.decode(file.subarray(at, newline));
    at = newline + 1;
    return text;
  };
  if (line() !== VERSION_LINE) return { broken: 'not an age-encryption.org/v1 file' };
  const stanzas: Header['stanzas'] = [];
  for (;;) {
    const start = at;
    const next = line();
    if (next === undefined) return { broken: 'its header has no end' };
    if (next.startsWith('--- ')) {
      const mac = fromUnpadded(next.slice(4));
      if (stanzas.length === 0 || mac?.length !== 32) return { broken: 'its header is not valid' };
      return { stanzas, covered: file.subarray(0, start + 3), mac, end: at };
    }
    const args = next.startsWith('-> ') ? next.slice(3).split(' ') : [];
    if (args.length === 0 || args.some((arg) => !/^[\x21-\x7e]+$/.test(arg)))
      return { broken: 'its header is not valid' };
    const body: Uint8Array[] = [];
    for (;;) {
      const text = line();
      const bytes = text === undefined ? undefined : fromUnpadded(text);
      if (bytes === undefined || bytes.length > BODY_LINE_BYTES)
        return { broken: 'a stanza of its header is not valid' };
      body.push(bytes);
      if (bytes.length < BODY_LINE_BYTES) break;
    }
    stanzas.push({ args, body: concat(body) });
  }
}

/** A header's base64: canonical, unpadded. */
const unpadded = (bytes: Uint8Array) => base64nopad.encode(bytes);
function fromUnpadded(text: string) {
  try {
    return base64nopad.decode(text);
  } catch {
    return undefined;
  }
}

/** The file key, unwrapped by the first identity one of the X25519 stanzas was sealed to. */
async function unwrap(
  p: AgePrimitives,
  stanzas: Header['stanzas'],
  identities: readonly X25519Identity[],
): Promise<Uint8Array | { broken: string } | undefined> {
  for (const identity of identities) {
    for (const { args, body } of stanzas) {
      if (args[0] !== 'X25519') continue;
      const share = args.length === 2 ? fromUnpadded(args[1] as string) : undefined;
      if (share?.length !== 32 || body.length !== 32)
        return { broken: 'an X25519 stanza of its header is not valid' };
      const shared = await identity.exchange(await p.x25519Public(share));
      if (shared === undefined) return { broken: 'an X25519 stanza has a low-order share' };
      const fileKey = p.open(wrapKey(p, shared, share, identity.publicKey), ZERO_NONCE, body);
      // Else sealed to another recipient: the next stanza may be this identity's.
      if (fileKey !== undefined) return fileKey;
    }
  }
  return undefined;
}

/** Opens a binary age file with the first of `identities` it was sealed to. */
export async function openAge(
  file: Uint8Array,
  identities: readonly X25519Identity[],
  p: AgePrimitives,
): Promise<Opened> {
  const header = parseHeader(file);
  if ('broken' in header) return header;
  const fileKey = await unwrap(p, header.stanzas, identities);
  if (fileKey === undefined) return { unmatched: true };
  if ('broken' in fileKey) return fileKey;
  const mac = p.hmac(p.hkdf(fileKey, undefined, HEADER_INFO, 32), header.covered);
  if (!sameBytes(mac, header.mac)) return { broken: 'its header was altered (its MAC differs)' };
  const nonce = file.subarray(header.end, header.end + 16);
  const payload = file.subarray(header.end + 16);
  // The nonce ends the header as the format reads it: a file cut within it is cut there.
  if (nonce.length !== 16) return { broken: 'it is cut short after its header' };
  if (payload.length < TAG) return { broken: 'its payload is cut short' };
  const payloadKey = p.hkdf(fileKey, nonce, PAYLOAD_INFO, 32);
  const chunks: Uint8Array[] = [];
  for (let index = 0, at = 0; at < payload.length; index++) {
    const end = Math.min(at + CHUNK + TAG, payload.length);
    const last = end === payload.length;
    const plain = p.open(payloadKey, chunkNonce(index, last), payload.subarray(at, end));
    if (plain === undefined) return { broken: 'its payload was altered or cut' };
    // Only a file's first chunk may be empty (an empty value).
    if (last && index > 0 && plain.length === 0) return { broken: 'its last chunk is empty' };
    chunks.push(plain);
    at = end;
  }
  return { value: concat(chunks) };
}

/** Equal bytes, compared in time that does not depend on where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array) {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= (a[i] as number) ^ (b[i] as number);
  return differ === 0;
}
