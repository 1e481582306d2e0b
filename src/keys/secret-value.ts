/**
 * A key secret's value as the vault keeps it: its private key, PEM, as minted or as found
 * on the node; for a `tls` secret, its certificate (PEM) after it, so that the two are
 * kept, replaced and restored together and never part. The certificate is public: it is
 * placed by `{{cert NAME}}` and never masked; only the key is a secret.
 */

/** A key secret's value, read: its private key's text and its certificate's. */
export interface KeyValue {
  key: string;
  certificate?: string;
}

/** The value the vault keeps for a key, and for a `tls` secret its certificate. */
export function keyValueBytes(key: string, certificate?: string): Uint8Array {
  return new TextEncoder().encode(
    certificate === undefined ? key : `${endedByNewline(key)}${certificate}`,
  );
}

/** A kept key secret's value, read back: the key, and the certificate from its first BEGIN line. */
export function keyValueOf(value: Uint8Array): KeyValue {
  const text = new TextDecoder().decode(value);
  const at = text.search(/^-----BEGIN CERTIFICATE-----/m);
  if (at < 0) return { key: text };
  return { key: text.slice(0, at), certificate: text.slice(at) };
}

/** PEM text as files hold it: ending with a newline, as OpenSSL writes them. */
export function endedByNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * The vault's name for a rotation previewed and not yet acted on: the new key (and
 * certificate) of `secret`, kept sealed beside the one in use. No secret's own name has a
 * space, so it is never a secret of the module's.
 */
export function rotatingName(secret: string): string {
  return `${secret} (rotating)`;
}
