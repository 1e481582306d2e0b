import type * as v from 'valibot';
import { closest } from './did-you-mean.ts';

/**
 * valibot's issues, said in the words of the operator who wrote the JSON: where (the
 * path as dotted keys, `files./etc/x.mode`) and what is wrong there. One line, from
 * the first issue; the operator mends it and is told the next.
 *
 * - an unknown field: `unknown field files./etc/x.mdoe; did you mean mode?`
 * - a missing field: `missing field files./etc/x.content`
 * - a wrong type: `needs: expected a list, got the string "postgres"`
 * - a rule of our own (a check, a regex): `files./etc/x.mode: a mode is octal, like "0640"`
 *
 * `schema` is the one the issues came from: the fields it knows at the unknown field's
 * depth are what "did you mean" is chosen from. With `quoteValues: false` (a file that
 * holds secrets) no value the file holds is shown, only its kind.
 */
export function describeIssues(
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  schema: v.GenericSchema,
  { quoteValues = true }: { quoteValues?: boolean } = {},
): string {
  const issue = issues[0];
  const keys = (issue.path ?? []).map((item) => String(item.key));
  const path = keys.join('.');
  const last = issue.path?.at(-1);

  if (last && 'origin' in last && last.origin === 'key' && isObjectType(issue.type)) {
    if (issue.expected !== 'never') return `missing field ${path}`;
    const meant = closest(keys.at(-1) ?? '', fieldsAt(schema, keys.slice(0, -1)));
    return `unknown field ${path}${meant ? `; did you mean ${meant}?` : ''}`;
  }

  const where = path ? `${path}: ` : '';
  if (issue.kind === 'validation') return `${where}${quoteValues ? issue.message : 'not valid'}`;
  const expected = EXPECTED[issue.type] ?? expectedFromValibot(issue);
  return `${where}expected ${expected}, got ${describeValue(issue.input, quoteValues)}`;
}

/** What a schema of each type takes, as the operator would say it. */
const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  strict_object: 'an object',
  loose_object: 'an object',
  record: 'an object',
};

function isObjectType(type: string): boolean {
  return type === 'object' || type === 'strict_object' || type === 'loose_object';
}

/** A literal or a picklist expects values of its own, which valibot spells `("a" | "b")`. */
function expectedFromValibot(issue: v.BaseIssue<unknown>): string {
  return issue.expected?.replace(/^\((.*)\)$/, '$1').replaceAll(' | ', ' or ') ?? 'another value';
}

/** The longest string quoted back; a longer one is told by its kind. */
const QUOTED_STRING_LIMIT = 40;

function describeValue(value: unknown, quoteValues: boolean): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') {
    return quoteValues && value.length <= QUOTED_STRING_LIMIT
      ? `the string ${JSON.stringify(value)}`
      : 'a string';
  }
  if (typeof value === 'number') return quoteValues ? `the number ${value}` : 'a number';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** The parts of a schema that "did you mean" looks through. */
interface SchemaPart {
  kind: string;
  type: string;
  wrapped?: SchemaPart;
  pipe?: SchemaPart[];
  entries?: Record<string, SchemaPart>;
  value?: SchemaPart;
  item?: SchemaPart;
  options?: unknown[];
}

/** The fields the objects at `keys` know: each union option's, each record value's. */
function fieldsAt(schema: v.GenericSchema, keys: readonly string[]): string[] {
  let here = plain(schema as unknown as SchemaPart);
  for (const key of keys) here = here.flatMap((part) => inside(part, key)).flatMap(plain);
  return here.flatMap((part) => Object.keys(part.entries ?? {}));
}

/** The schemas a value meets at one place: what an optional wraps, each schema of a pipe. */
function plain(part: SchemaPart): SchemaPart[] {
  if (part.wrapped) return plain(part.wrapped);
  if (part.pipe) return part.pipe.filter((item) => item.kind === 'schema').flatMap(plain);
  return [part];
}

function inside(part: SchemaPart, key: string): SchemaPart[] {
  if (part.type === 'union' || part.type === 'variant') {
    return (part.options as SchemaPart[]).flatMap(plain).flatMap((option) => inside(option, key));
  }
  if (part.entries) return part.entries[key] ? [part.entries[key]] : [];
  if (part.type === 'record' && part.value) return [part.value];
  if (part.type === 'array' && part.item) return [part.item];
  return [];
}
