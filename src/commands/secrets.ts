/** Secret values: how berth mints them and how it puts them into files. */

import { maskLine, type NamedValue, SHORTEST_IN_PLACE } from '../diff/secret-masks.ts';
import { privateKeyTexts } from '../keys/pem.ts';

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

/** A line of a key's base64 this long or longer is masked on its own, wherever it stands. */
const KEY_LINE_MASKED = 16;

/**
 * What of a kept value must never be shown: the value itself; for a key, its private key
 * (a `tls` secret's certificate beside it is public), whole and each of its base64 lines,
 * so that a part of it a hook prints (`head -3 key.pem`) is masked too.
 */
export function maskedTexts(value: Uint8Array): string[] {
  const text = secretText(value);
  const keys = privateKeyTexts(text);
  if (keys.length === 0) return [text];
  return keys.flatMap((key) => [
    key,
    ...key
      .split(/\r?\n/)
      .filter((line) => line.length >= KEY_LINE_MASKED && !line.startsWith('-----')),
  ]);
}

/** Each text to mask of a kept or found value, by the name it is shown by. */
export function maskedAs(name: string, value: Uint8Array): NamedValue[] {
  return maskedTexts(value).map((text) => [name, text]);
}

/** Secret files are readable by their owner alone. */
export const SECRET_MODE = 0o600;

/** A secret value as berth may meet it in text, and what stands for it there. */
type Shown = { text: string; label: string };

/**
 * Kept values as they would be printed, long enough to be cleared where they stand; a
 * shorter one (`shortSecrets`) hides the whole line it is in (secret-masks.ts).
 */
function shownSecrets(secrets: readonly KeptValue[]): Shown[] {
  return secrets
    .flatMap(({ module, secret, value }) =>
      maskedTexts(value).map((text) => ({ text, label: `[secret ${secret} of ${module}]` })),
    )
    .filter(({ text }) => text.length >= SHORTEST_IN_PLACE);
}

/** The values too short to clear where they stand, each by the name its line is hidden by. */
function shortSecrets(secrets: readonly KeptValue[]): NamedValue[] {
  return secrets
    .flatMap(({ module, secret, value }) => maskedAs(`${secret} of ${module}`, value))
    .filter(([, text]) => text.length > 0 && text.length < SHORTEST_IN_PLACE);
}

/** Each line of `text` that holds a short value, hidden whole. */
function hideShortLines(text: string, short: readonly NamedValue[]): string {
  if (short.length === 0) return text;
  return text
    .split('\n')
    .map((line) => maskLine(line, short))
    .join('\n');
}

/** A kept secret's value, with whose it is: what clearing text needs of the vault. */
export type KeptValue = { module: string; secret: string; value: Uint8Array };

/** One pattern for all the secrets of a clearing, made once: a chatty hook is cleared a chunk at a time. */
const patterns = new WeakMap<readonly Shown[], { pattern: RegExp; labels: Map<string, string> }>();

function replaceSecrets(text: string, shown: readonly Shown[]): string {
  if (shown.length === 0) return text;
  let made = patterns.get(shown);
  if (!made) {
    // Longest first: where two begin at one place, the longer is cleared whole.
    const longestFirst = [...shown].sort((a, b) => b.text.length - a.text.length);
    const alternatives = longestFirst.map(({ text }) =>
      text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
    made = {
      pattern: new RegExp(alternatives.join('|'), 'g'),
      labels: new Map(longestFirst.map(({ text, label }) => [text, label])),
    };
    patterns.set(shown, made);
  }
  const { labels } = made;
  return text.replace(made.pattern, (found) => labels.get(found) ?? found);
}

/** How much of a hook's output berth's words (a refusal, said, the journal) keep: its end. */
export const SHOWN_OUTPUT = 2_000;

/**
 * A hook's output as berth's words keep it: cleared of secrets, then cut to its last
 * SHOWN_OUTPUT characters (a little more to keep a label whole), never the other way round. `cut` says that the machine kept
 * only the end of it: the kept text may then begin inside a secret, and the tail of one
 * found at its start is cleared too.
 */
export function clearHookOutput(
  output: string,
  secrets: readonly KeptValue[],
  cut: boolean,
): string {
  const shown = shownSecrets(secrets);
  let clear = hideShortLines(replaceSecrets(output, shown), shortSecrets(secrets));
  if (cut) {
    let longest: { length: number; label: string } | undefined;
    for (const { text, label } of shown) {
      // The tail of a secret the text may begin with starts where the secret holds the
      // text's first character: only there is it worth comparing.
      for (
        let at = text.indexOf(clear.charAt(0), 1);
        at > 0;
        at = text.indexOf(clear.charAt(0), at + 1)
      ) {
        const length = text.length - at;
        if (length <= (longest?.length ?? 0)) break;
        if (clear.startsWith(text.slice(at))) {
          longest = { length, label };
          break;
        }
      }
    }
    if (longest) clear = `${longest.label}${clear.slice(longest.length)}`;
  }
  // A label the cut would fall in is kept whole: the words say whose secret stood there.
  let from = Math.max(0, clear.length - SHOWN_OUTPUT);
  for (const { label } of shown) {
    const at = clear.lastIndexOf(label, from);
    if (at >= 0 && at < from && from < at + label.length) from = at;
  }
  return clear.slice(from);
}

/** A line with no end this long is told in pieces, rather than held whole. */
const LONGEST_HELD = 8 * 1024;

/**
 * Told a hook's output as it comes, tells it again line by line, cleared of secrets:
 * what a chunk cut in two, or a line break inside a secret (a PEM key), would let pass
 * is held back until the rest arrives. `end` tells what is left.
 */
export function clearingLines(
  secrets: readonly KeptValue[],
  tell: (line: string) => void,
): { write(text: string): void; end(): void } {
  const shown = shownSecrets(secrets);
  const short = shortSecrets(secrets);
  let pending = '';
  const flush = (final: boolean) => {
    const clear = replaceSecrets(pending, shown);
    let upTo = final ? clear.length : clear.lastIndexOf('\n') + 1;
    if (!final) {
      const held = heldFrom(clear, shown);
      // A secret begun but not ended holds back the line it began in.
      if (held < upTo) upTo = clear.lastIndexOf('\n', held - 1) + 1;
      if (upTo === 0 && held > LONGEST_HELD) upTo = held;
    }
    pending = clear.slice(upTo);
    const told = clear.slice(0, upTo).replace(/\n$/, '');
    if (upTo > 0) for (const line of told.split('\n')) tell(maskLine(line, short));
  };
  return {
    write(text) {
      pending += text;
      flush(false);
    },
    end() {
      if (pending) flush(true);
    },
  };
}

/** Where the text's end may begin a secret still to be completed; its length when nowhere. */
function heldFrom(text: string, shown: readonly Shown[]): number {
  let held = text.length;
  const lineStart = text.lastIndexOf('\n') + 1;
  for (const { text: secret } of shown) {
    // Only where the secret's first character stands can it begin; and, unless it spans
    // lines, on the last line.
    const first = secret.charAt(0);
    const from = Math.max(text.length - secret.length + 1, secret.includes('\n') ? 0 : lineStart);
    let at = text.indexOf(first, from);
    for (; at !== -1 && at < held; at = text.indexOf(first, at + 1)) {
      if (secret.startsWith(text.slice(at))) {
        held = at;
        break;
      }
    }
  }
  return held;
}
