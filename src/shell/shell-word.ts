/** A string as one word of sh, for the data put with berth's fixed sh: single quotes, each inner quote as '\''. */
export function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
