/**
 * Digests over canonical JSON: object keys sorted, no white space, so the same
 * facts always give the same digest whatever order they were gathered in.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let hex = '';
  for (const byte of view) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * Bytes as Web Crypto takes them (a BufferSource: over an ArrayBuffer, never a
 * SharedArrayBuffer), copied only when they are not so already. The DOM library and
 * Deno hold to this; only @types/node's looser types let any Uint8Array through.
 */
function bufferSource(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : new Uint8Array(bytes);
}

async function sha256Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  return toHex(await crypto.subtle.digest('SHA-256', bufferSource(bytes)));
}

export function digestOf(value: unknown): Promise<string> {
  return sha256Hex(canonicalJson(value));
}

/**
 * A fingerprint of what a machine holds (a secret, or a file that may carry one):
 * HMAC-SHA256 under a key kept in the vault, so that a fingerprint in the state or
 * a kept preview cannot be used to guess a weak password.
 */
export async function fingerprintWith(key: Uint8Array, value: Uint8Array): Promise<string> {
  const hmacKey = await crypto.subtle.importKey(
    'raw',
    bufferSource(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return toHex(await crypto.subtle.sign('HMAC', hmacKey, bufferSource(value))).slice(0, 32);
}
