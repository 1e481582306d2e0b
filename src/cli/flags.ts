/** The options cac parsed, camel-cased (`fullDiff`), each value text as typed or a flag's true. */
export type Flags = Record<string, unknown>;

/** Every value an option was given, in order (`--mint a --mint b`). */
export function textsOf(flags: Flags, name: string): string[] {
  return [flags[name]].flat().filter((value): value is string => typeof value === 'string');
}

/** The value an option was given last, or undefined. */
export function textOf(flags: Flags, name: string): string | undefined {
  return textsOf(flags, name).at(-1);
}
