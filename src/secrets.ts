/** Secret values: how berth mints them and how it puts them into files. */

/** A fresh secret: `bytes` random bytes, written as base64url text so it fits any config file. */
export function mintSecret(bytes: number): Uint8Array {
  const random = crypto.getRandomValues(new Uint8Array(bytes));
  let binary = '';
  for (const byte of random) binary += String.fromCharCode(byte);
  const text = btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  return new TextEncoder().encode(text);
}

/** A secret as text for a file's `{{secret NAME}}`: without the newline a hand-made file ends with. */
export function secretText(value: Uint8Array): string {
  return new TextDecoder().decode(value).replace(/\r?\n$/, '');
}

/** Secret files are readable by their owner alone. */
export const SECRET_MODE = 0o600;

/**
 * Clears known secret values out of text berth will show (a hook's output): each is
 * replaced by its name. A hook may print what it reads; berth must not repeat it.
 */
export function redactSecrets(
  text: string,
  secrets: { module: string; secret: string; value: Uint8Array }[],
): string {
  let clear = text;
  for (const { module, secret, value } of secrets) {
    const shown = secretText(value);
    // Too short to say whether it is the secret or an ordinary word: left as printed.
    if (shown.length < 6) continue;
    clear = clear.replaceAll(shown, `[secret ${secret} of ${module}]`);
  }
  return clear;
}
