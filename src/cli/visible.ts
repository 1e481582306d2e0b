/**
 * Text as a terminal is to show it and never obey it: what berth prints holds text from
 * nodes (diff lines, hook and check output, apt's and ssh's words), which a service's user
 * may fill with escapes that move the cursor, erase a line of the preview, set the window
 * title or the clipboard. Every control character but the line feed and the tab is written
 * as the escape a person reads: `\x1b`, `\x0d` for the C0 controls; `\u009b` for DEL and
 * the C1 controls, and `\u202e` for the characters that reorder or break lines (a line and
 * paragraph separator, the bidirectional embeddings, overrides and isolates). The second
 * form is also JSON's, so `--json` stays the same JSON. berth's own escapes (the live
 * view's colours and cursor moves) are added around text that went through here.
 */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (char) => {
    if (char === '\n' || char === '\t') return char;
    const code = char.codePointAt(0) as number;
    return code < 0x20
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** C0 and C1 controls and DEL (\p{Cc}), and the characters that break or reorder lines. */
const INVISIBLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
