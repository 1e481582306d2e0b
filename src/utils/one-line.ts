/**
 * Characters that can end a line, move the cursor, or reorder what is shown: C0 and C1
 * controls and DEL (\p{Cc}), the Unicode line and paragraph separators, and the
 * bidirectional embeddings, overrides and isolates.
 */
const CONTROL = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const CONTROLS = new RegExp(CONTROL.source, 'gu');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Whether `text` holds a character that `oneLine` would escape. */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/**
 * `text` as one line that shows only what it holds: each of those characters written as
 * an escape (`\n`, `\r`, `\t`, else `\u001b`), so that a line of `berth log` is one entry,
 * whatever a name, an actor or a refusal in it held.
 */
export function oneLine(text: string): string {
  return text.replace(
    CONTROLS,
    (char) => NAMED[char] ?? `\\u${(char.codePointAt(0) as number).toString(16).padStart(4, '0')}`,
  );
}
