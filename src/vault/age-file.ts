/**
 * One age file (age-encryption.org/v1) sealed to X25519 recipients, and opened with X25519
 * identities, in memory. age-encryption's Encrypter and Decrypter do the same through web
 * streams, two Web Crypto imports of each ephemeral key, and a 64 KiB buffer a file; for
 * the vault's short values that machinery cost more than the cryptography (a converge of
 * 100 secrets paid 2–7× its unsealed cost). Here each file costs one X25519 exchange
 * (sealing: a generated ephemeral key; opening: the share against an identity imported
 * once) and the same primitives age-encryption uses (@noble's ChaCha20-Poly1305, HKDF and
 * HMAC over SHA-256). The reference `age` opens what this seals and the other way round
 * (tests/vault/sealed-files.test.ts).
 */
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64nopad, bech32 } from '@scure/base';

const ascii = (text: string) => new TextEncoder().encode(text);
const VERSION_LINE = 'age-encryption.org/v1';
const X25519_INFO = ascii('age-encryption.org/v1/X25519');
const HEADER_INFO = ascii('header');
const PAYLOAD_INFO = ascii('payload');
/** The payload is sealed in chunks of 64 KiB, each with a 16-byte Poly1305 tag. */
const CHUNK = 64 * 1024;
const TAG = 16;
/** A stanza's body is base64 in lines of 64 characters (48 bytes), the last one shorter. */
const BODY_LINE_BYTES = 48;
/** A PKCS #8 X25519 private key is this prefix and the key's 32 bytes (RFC 8410). */
const PKCS8_X25519 = [
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
];
/** The X25519 base point: a scalar times it is that scalar's public key. */
const BASE_POINT = new Uint8Array(32);
BASE_POINT[0] = 9;
const X25519 = { name: 'X25519' } as const;

/** Web Crypto's key, as both Node's types and the DOM's know it. */
type WebKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** A recipient (`age1…`), its public key imported once for every file sealed to it. */
export interface X25519Recipient {
  readonly bytes: Uint8Array;
  readonly key: WebKey;
}

/** An identity (`AGE-SECRET-KEY-1…`), imported once, with its own recipient's bytes. */
export interface X25519Identity {
  readonly key: WebKey;
  readonly recipient: Uint8Array;
}

/** An opened file, or why it could not be: sealed to none of these identities, or not an age file. */
export type Opened = { value: Uint8Array } | { unmatched: true } | { broken: string };

export async function importRecipient(text: string): Promise<X25519Recipient> {
  const { prefix, bytes: decoded } = bech32.decodeToBytes(text);
  if (prefix !== 'age' || decoded.length !== 32) throw new Error(`${text} is not an age recipient`);
  const bytes = new Uint8Array(decoded);
  return { bytes, key: await crypto.subtle.importKey('raw', bytes, X25519, false, []) };
}

export async function importIdentity(text: string): Promise<X25519Identity> {
  const { prefix, bytes } = bech32.decodeToBytes(text.toLowerCase());
  if (prefix !== 'age-secret-key-' || bytes.length !== 32)
    throw new Error('not an AGE-SECRET-KEY-1… identity');
  const key = await crypto.subtle.importKey(
    'pkcs8',
    new Uint8Array([...PKCS8_X25519, ...bytes]),
    X25519,
    false,
    ['deriveBits'],
  );
  const recipient = await exchange(key, BASE_POINT);
  if (recipient === undefined) throw new Error('not an X25519 key');
  return { key, recipient };
}

/** X25519; undefined for an all-zero result (a low-order share), which age refuses. */
async function exchange(own: WebKey, peer: Uint8Array | WebKey) {
  const public_ =
    peer instanceof Uint8Array
      ? await crypto.subtle.importKey('raw', new Uint8Array(peer), X25519, false, [])
      : peer;
  const shared = new Uint8Array(
    await crypto.subtle.deriveBits({ name: 'X25519', public: public_ }, own, 256),
  );
  return shared.some((byte) => byte !== 0) ? shared : undefined;
}

/** The key that wraps a file key for one recipient, from the exchange and both public keys. */
function wrapKey(shared: Uint8Array, share: Uint8Array, recipient: Uint8Array) {
  const salt = new Uint8Array(64);
  salt.set(share);
  salt.set(recipient, 32);
  return hkdf(sha256, shared, salt, X25519_INFO, 32);
}

const ZERO_NONCE = new Uint8Array(12);

/** One X25519 stanza's lines: a new ephemeral key's share, and the file key wrapped. */
async function stanzaFor(recipient: X25519Recipient, fileKey: Uint8Array): Promise<string> {
  const ephemeral = (await crypto.subtle.generateKey(X25519, false, ['deriveBits'])) as {
    publicKey: WebKey;
    privateKey: WebKey;
  };
  const [share, shared] = await Promise.all([
    crypto.subtle.exportKey('raw', ephemeral.publicKey).then((raw) => new Uint8Array(raw)),
    exchange(ephemeral.privateKey, recipient.key),
  ]);
  if (shared === undefined) throw new Error('the recipient is a low-order point');
  const body = chacha20poly1305(wrapKey(shared, share, recipient.bytes), ZERO_NONCE).encrypt(
    fileKey,
  );
  return `-> X25519 ${base64nopad.encode(share)}\n${base64nopad.encode(body)}\n`;
}

/** The nonce of a payload chunk: its counter, big-endian in 11 bytes, then 1 for the last. */
function chunkNonce(counter: number, last: boolean) {
  const nonce = new Uint8Array(12);
  new DataView(nonce.buffer).setUint32(7, counter);
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
): Promise<Uint8Array> {
  const fileKey = crypto.getRandomValues(new Uint8Array(16));
  const stanzas = await Promise.all(recipients.map((recipient) => stanzaFor(recipient, fileKey)));
  const header = ascii(`${VERSION_LINE}\n${stanzas.join('')}---`);
  const mac = hmac(sha256, hkdf(sha256, fileKey, undefined, HEADER_INFO, 32), header);
  const nonce = crypto.getRandomValues(new Uint8Array(16));
  const payloadKey = hkdf(sha256, fileKey, nonce, PAYLOAD_INFO, 32);
  const chunks: Uint8Array[] = [];
  const count = Math.max(1, Math.ceil(value.length / CHUNK));
  for (let index = 0; index < count; index++) {
    const nonceOf = chunkNonce(index, index === count - 1);
    const plain = value.subarray(index * CHUNK, (index + 1) * CHUNK);
    chunks.push(chacha20poly1305(payloadKey, nonceOf).encrypt(plain));
  }
  return concat([header, ascii(` ${base64nopad.encode(mac)}\n`), nonce, ...chunks]);
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
    const text = new TextDecoder('latin1').decode(file.subarray(at, newline));
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
      const mac = decode64(next.slice(4));
      if (stanzas.length === 0 || mac?.length !== 32) return { broken: 'its header is not valid' };
      return { stanzas, covered: file.subarray(0, start + 3), mac, end: at };
    }
    const args = next.startsWith('-> ') ? next.slice(3).split(' ') : [];
    if (args.length === 0 || args.some((arg) => !/^[\x21-\x7e]+$/.test(arg)))
      return { broken: 'its header is not valid' };
    const body: Uint8Array[] = [];
    for (;;) {
      const text = line();
      const bytes = text === undefined ? undefined : decode64(text);
      if (bytes === undefined || bytes.length > BODY_LINE_BYTES)
        return { broken: 'a stanza of its header is not valid' };
      body.push(bytes);
      if (bytes.length < BODY_LINE_BYTES) break;
    }
    stanzas.push({ args, body: concat(body) });
  }
}

/** Canonical unpadded base64, or undefined. */
function decode64(text: string) {
  try {
    return base64nopad.decode(text);
  } catch {
    return undefined;
  }
}

/** The file key, unwrapped by the first identity one of the X25519 stanzas was sealed to. */
async function unwrap(
  stanzas: Header['stanzas'],
  identities: readonly X25519Identity[],
): Promise<Uint8Array | { broken: string } | undefined> {
  for (const identity of identities) {
    for (const { args, body } of stanzas) {
      if (args[0] !== 'X25519') continue;
      const share = args.length === 2 ? decode64(args[1] as string) : undefined;
      if (share?.length !== 32 || body.length !== 32)
        return { broken: 'an X25519 stanza of its header is not valid' };
      const shared = await exchange(identity.key, share);
      if (shared === undefined) return { broken: 'an X25519 stanza has a low-order share' };
      try {
        return chacha20poly1305(wrapKey(shared, share, identity.recipient), ZERO_NONCE).decrypt(
          body,
        );
      } catch {
        // Sealed to another recipient: the next stanza may be this identity's.
      }
    }
  }
  return undefined;
}

/** Opens a binary age file with the first of `identities` it was sealed to. */
export async function openAge(
  file: Uint8Array,
  identities: readonly X25519Identity[],
): Promise<Opened> {
  const header = parseHeader(file);
  if ('broken' in header) return header;
  const fileKey = await unwrap(header.stanzas, identities);
  if (fileKey === undefined) return { unmatched: true };
  if ('broken' in fileKey) return fileKey;
  const mac = hmac(sha256, hkdf(sha256, fileKey, undefined, HEADER_INFO, 32), header.covered);
  if (!sameBytes(mac, header.mac)) return { broken: 'its header was altered (its MAC differs)' };
  const nonce = file.subarray(header.end, header.end + 16);
  const payload = file.subarray(header.end + 16);
  if (nonce.length !== 16 || payload.length < TAG) return { broken: 'it is cut short' };
  const payloadKey = hkdf(sha256, fileKey, nonce, PAYLOAD_INFO, 32);
  const chunks: Uint8Array[] = [];
  for (let index = 0, at = 0; at < payload.length; index++) {
    const end = Math.min(at + CHUNK + TAG, payload.length);
    const last = end === payload.length;
    try {
      const plain = chacha20poly1305(payloadKey, chunkNonce(index, last)).decrypt(
        payload.subarray(at, end),
      );
      // Only a file's first chunk may be empty (an empty value).
      if (last && index > 0 && plain.length === 0) return { broken: 'its last chunk is empty' };
      chunks.push(plain);
    } catch {
      return { broken: 'its payload was altered or cut' };
    }
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
