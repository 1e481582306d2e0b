/**
 * cac reads the command line through mri, which turns every number-like word into a number
 * before any cac `type` sees it: a node `1e3` would be 1000, `0x10` 16, a digest of digits
 * would lose its leading zeros, a blank `--issuer " "` would be 0. Names, digests and
 * addresses are text, and cac hands mri no list of options to keep as text; so berth gives
 * cac each number-like word with a NUL in front (which no word of a command line can hold),
 * mri keeps such a word as text, and berth takes the NUL off what cac parsed. Words after
 * `--` cac keeps as text itself.
 */
const MARK = '\0';

/** mri's own test of a word it reads as a number. */
const numberLike = (text: string) => Number(text) * 0 === 0;

/** The command line with each number-like word (or `--flag=` value, empty too) marked as text. */
export function markedAsText(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return argv.map((word, index) => {
    if (end !== -1 && index >= end) return word;
    if (!word.startsWith('-')) return numberLike(word) ? MARK + word : word;
    // `--issuer=` is an empty value, as typed (mri would read it as the flag alone).
    const equals = word.indexOf('=');
    if (equals === -1 || !numberLike(word.slice(equals + 1))) return word;
    return `${word.slice(0, equals + 1)}${MARK}${word.slice(equals + 1)}`;
  });
}

/** A parsed word or option value (or a list of them) as it was typed. */
export function asTyped<T>(value: T): T {
  if (typeof value === 'string' && value.startsWith(MARK)) return value.slice(1) as T;
  if (Array.isArray(value)) return value.map(asTyped) as T;
  return value;
}
