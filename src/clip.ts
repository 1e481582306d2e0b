/**
 * Text quoted back to a caller, cut to `max` characters with an ellipsis: a refusal
 * names what it was given, but need not repeat 60 KB of it.
 */
export function clip(text: string, max = 80): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in two: half a character is not text.
  const end = /[\ud800-\udbff]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * `message` with `quoted`, a value it names (a JSON string keeps its quotes), cut to
 * `max` characters: "received "xxx…"" rather than the whole of what was sent.
 */
export function clipQuoted(message: string, quoted: string, max = 80): string {
  if (quoted.length <= max + 2) return message;
  const short =
    quoted.startsWith('"') && quoted.endsWith('"')
      ? `"${clip(quoted.slice(1, -1), max)}"`
      : clip(quoted, max);
  return message.replace(quoted, () => short);
}
