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
