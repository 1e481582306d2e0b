/**
 * The one rule for node and module names. Nothing from a request becomes a path
 * or a store key without passing it.
 */
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function isName(text: string): boolean {
  return NAME.test(text);
}

/** Shows a name the user gave, quoted and with control characters made visible. */
function quote(text: string): string {
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return JSON.stringify(shown);
}

/** The refusal for a name that breaks the rule, or undefined when it keeps it. */
export function checkName(kind: 'node' | 'module', text: string): string | undefined {
  return isName(text) ? undefined : nameWords(kind, text);
}

/** The words of a name that breaks the rule. */
export function nameWords(kind: 'node' | 'module', text: string): string {
  return `${quote(text)} is not a ${kind} name: names are 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit`;
}
