/**
 * What a preview shows of text that may hold secret values (a file's diff): every value
 * the vault holds for the node, of any module, and every value found on the machine, in
 * place as `[secret NAME]`. A value shorter than SHORTEST_IN_PLACE is not replaced where
 * it stands, since the words around it would give it away (`name = [secret pw]` against
 * `+name = app`): the whole line holding it is `[a line holding secret NAME]`.
 */

/** A secret value and the name it is shown by. */
export type NamedValue = readonly [name: string, value: string];

/** The shortest value shown in place; a shorter one hides its whole line. */
export const SHORTEST_IN_PLACE = 8;

/**
 * `text` with each value of SHORTEST_IN_PLACE characters or more replaced by `[secret
 * NAME]`, wherever it stands (across lines too: a PEM key), longest first: a value inside
 * another must not leave part of the longer one shown.
 */
export function maskInPlace(text: string, values: readonly NamedValue[]): string {
  let shown = text;
  const byLength = values
    .filter(([, value]) => value.length >= SHORTEST_IN_PLACE)
    .sort(([, a], [, b]) => b.length - a.length);
  for (const [name, value] of byLength) shown = shown.replaceAll(value, `[secret ${name}]`);
  return shown;
}

/** `line` as shown: `[a line holding secret NAME]` when a value too short to mask in place is in it. */
export function maskLine(line: string, values: readonly NamedValue[]): string {
  for (const [name, value] of values)
    if (value.length > 0 && value.length < SHORTEST_IN_PLACE && line.includes(value))
      return `[a line holding secret ${name}]`;
  return line;
}
