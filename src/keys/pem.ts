/**
 * PEM (RFC 7468): DER bytes between `-----BEGIN LABEL-----` and `-----END LABEL-----`
 * lines, in base64. Read laxly as RFC 7468 asks (text around the blocks, any line
 * length, CR LF), written strictly (64 characters a line, one newline at the end).
 */

export interface PemBlock {
  label: string;
  /** The block's bytes; empty when its base64 is not base64. */
  der: Uint8Array<ArrayBuffer>;
  /** RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`): an OpenSSL key encrypted with a passphrase. */
  headers: boolean;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** Every PEM block of the text, in order. */
export function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(BLOCK)].map(([, label = '', body = '']) => {
    const headers = /^[A-Za-z-]+:/m.test(body);
    return { label, der: headers ? new Uint8Array() : decodeBase64(body), headers };
  });
}

/** DER bytes as a PEM block. */
export function pemOf(label: string, der: Uint8Array | ArrayBuffer): string {
  const bytes = der instanceof Uint8Array ? der : new Uint8Array(der);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const lines = btoa(binary).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function decodeBase64(body: string): Uint8Array<ArrayBuffer> {
  const text = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return new Uint8Array();
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

/**
 * Each private key of the text as it stands there, BEGIN line to END line: what must never
 * be shown of a kept key (its certificate beside it is public).
 */
export function privateKeyTexts(text: string): string[] {
  return [...text.matchAll(BLOCK)]
    .filter(([, label = '']) => label.endsWith('PRIVATE KEY'))
    .map(([block]) => block);
}
