import * as v from 'valibot';
import { didYouMean } from '../utils/did-you-mean.ts';
import { ownValue } from '../utils/own-record.ts';
import { jsonRecord, strictJsonObject } from '../utils/strict-json.ts';
import { isName } from './names.ts';
import { ALL, type Groups, groupsHolding, targetCovers } from './targets.ts';
import { VALUE_TYPES, type Value, ValueSchema, type ValueType } from './value-type.ts';

/**
 * Values: what differs from node to node. berth.json gives them by `@all`, group and node
 * (`values`); a definition declares the ones it reads (its `values`), each with a type and
 * a default or none (required). A node's value is its own, else its groups', else
 * `@all`'s; two groups of one node that give one name different values make berth.json
 * not valid, unless the node gives it itself. A secret is never a value.
 */

const NAME_RULE = 'a value name is a-z, 0-9 and _, starting with a letter';

/** A value's name: upper-cased, it is an environment variable's (`BERTH_VALUE_SITE_NAME`). */
export const ValueNameSchema = v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,62}$/, NAME_RULE));

/** The type a value is of. */
export function typeOf(value: Value): ValueType {
  return typeof value === 'string' ? 'string' : typeof value === 'number' ? 'integer' : 'boolean';
}

/** A value as a template and a hook's environment have it: `8`, `true`, the text itself. */
export function valueText(value: Value): string {
  return String(value);
}

/** A value as words quote it: a string in JSON's quotes, a number or boolean as it is. */
export function valueWords(value: Value): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** What a definition says of a value it reads: its type, its default (none: required), what it is. */
export const ValueSpecSchema = v.pipe(
  strictJsonObject({
    type: v.picklist(VALUE_TYPES),
    default: v.optional(ValueSchema),
    description: v.optional(v.string(), ''),
  }),
  v.check(
    (spec) => spec.default === undefined || typeOf(spec.default) === spec.type,
    (issue) => {
      const spec = issue.input as { type: ValueType; default: Value };
      return `the default ${valueWords(spec.default)} is not ${article(spec.type)}`;
    },
  ),
);
export type ValueSpec = v.InferOutput<typeof ValueSpecSchema>;

/** "an integer", "a string", "a boolean". */
export function article(type: ValueType): string {
  return `${type === 'integer' ? 'an' : 'a'} ${type}`;
}

/** A key of berth.json's `values`: `@all`, `@group` or a node. */
function isValuesKey(key: string): boolean {
  return key.startsWith('@') ? isName(key.slice(1)) : isName(key);
}

/** berth.json's `values`: by `@all`, `@group` or node, each name's value. */
export const GivenValuesSchema = v.pipe(
  jsonRecord(v.string(), jsonRecord(ValueNameSchema, ValueSchema)),
  v.check(
    (values) => Object.keys(values).every(isValuesKey),
    'values are given by @all, @group or a node name',
  ),
);
export type GivenValues = v.InferOutput<typeof GivenValuesSchema>;

/** A value berth.json gives a node, and where: the key of `values` it is under (`@web`). */
export interface Given {
  value: Value;
  from: string;
}

/** Two groups of a node that give one name different values. */
export interface Conflict {
  node: string;
  name: string;
  groups: [Given, Given];
}

/** The groups under `values` that take a node in, sorted: asked of one node alone. */
export function valueGroupsOf(values: GivenValues, node: string, groups: Groups): string[] {
  return Object.keys(values)
    .filter((key) => key.startsWith('@') && key !== `@${ALL}`)
    .filter((key) => targetCovers(key, node, groups))
    .sort();
}

/**
 * Each value berth.json gives a node, by name, with where it came from: its own, else its
 * groups' (`inGroups`, the keys of `values` that take it in), else `@all`'s. A name two of
 * its groups give differently, which the node does not give itself, is a conflict, and
 * given by neither.
 */
export function givenTo(
  values: GivenValues,
  node: string,
  inGroups: readonly string[],
): { given: Map<string, Given>; conflicts: Conflict[] } {
  const given = new Map<string, Given>();
  const conflicts: Conflict[] = [];
  const own = ownValue(values, node) ?? {};
  for (const [name, value] of Object.entries(own)) given.set(name, { value, from: node });
  const byGroups = new Map<string, Given>();
  const conflicting = new Set<string>();
  for (const group of inGroups) {
    for (const [name, value] of Object.entries(ownValue(values, group) ?? {})) {
      if (Object.hasOwn(own, name)) continue;
      const other = byGroups.get(name);
      if (!other) byGroups.set(name, { value, from: group });
      else if (other.value !== value && !conflicting.has(name)) {
        conflicting.add(name);
        conflicts.push({ node, name, groups: [other, { value, from: group }] });
      }
    }
  }
  for (const [name, item] of byGroups) if (!conflicting.has(name)) given.set(name, item);
  for (const [name, value] of Object.entries(ownValue(values, `@${ALL}`) ?? {}))
    if (!given.has(name) && !conflicting.has(name)) given.set(name, { value, from: `@${ALL}` });
  return { given, conflicts };
}

/** A conflict in words: what berth.json must say to mend it. */
export function conflictWords({ node, name, groups: [a, b] }: Conflict): string {
  return `values: ${node} is in ${a.from} and ${b.from}, which give ${name} different values (${valueWords(a.value)} and ${valueWords(b.value)}); give it under values.${node}.${name}, or make them agree`;
}

/**
 * What is wrong with berth.json's `values` on its whole inventory, in words: a key that
 * is neither a node nor a group, or two groups of a node that disagree. Checked where
 * berth.json is read whole.
 */
export function valuesProblem(
  values: GivenValues,
  nodes: readonly string[],
  groups: Groups,
): string | undefined {
  const known = new Set(nodes);
  for (const key of Object.keys(values)) {
    if (key === `@${ALL}`) continue;
    if (key.startsWith('@')) {
      if (!Object.hasOwn(groups, key.slice(1)))
        return `values.${key}: berth.json has no group ${key.slice(1)}${didYouMean(key, [`@${ALL}`, ...Object.keys(groups).map((group) => `@${group}`)])}`;
    } else if (!known.has(key))
      return `values.${key}: berth does not know node ${key}${didYouMean(key, nodes)}`;
  }
  const groupKeys = Object.keys(values).filter((key) => key.startsWith('@') && key !== `@${ALL}`);
  // Only a node in two groups that give values can meet a conflict.
  if (groupKeys.length < 2) return undefined;
  const holding = groupsHolding(groups);
  for (const node of [...holding.keys()].sort()) {
    const inGroups = (holding.get(node) ?? [])
      .map((group) => `@${group}`)
      .filter((key) => Object.hasOwn(values, key));
    if (inGroups.length < 2) continue;
    const [conflict] = givenTo(values, node, inGroups).conflicts;
    if (conflict) return conflictWords(conflict);
  }
  return undefined;
}

/** Why a module's value cannot be had on a node, as a value: the preview says it in words. */
export type ValueProblem =
  | { because: 'value-missing'; module: string; value: string }
  | { because: 'value-wrong-type'; module: string; value: string; type: ValueType; given: Given };

/** Where a value a module reads came from: berth.json (with its key), or the module's default. */
export type ValueFrom = { from: string } | { default: true };

/**
 * The values a module reads on a node: each it declares, as berth.json gives it to the
 * node, else its default; a required one no one gives, or one given of another type, is a
 * problem and left out.
 */
export function moduleValues(
  module: string,
  declared: Readonly<Record<string, ValueSpec>>,
  given: ReadonlyMap<string, Given>,
): { values: Record<string, Value>; problems: ValueProblem[] } {
  const values: Record<string, Value> = {};
  const problems: ValueProblem[] = [];
  for (const [name, spec] of Object.entries(declared).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const item = given.get(name);
    if (item && typeOf(item.value) !== spec.type)
      problems.push({
        because: 'value-wrong-type',
        module,
        value: name,
        type: spec.type,
        given: item,
      });
    else if (item) values[name] = item.value;
    else if (spec.default !== undefined) values[name] = spec.default;
    else problems.push({ because: 'value-missing', module, value: name });
  }
  return { values, problems };
}

/** A value problem in words, for a node: as the preview lists it and `validate` says it. */
export function valueProblemWords(problem: ValueProblem, node: string): string {
  if (problem.because === 'value-missing')
    return `${problem.module} needs the value ${problem.value}, which berth.json does not give ${node} and the module has no default for: give it under values in berth.json (values.${node}, a group of it, or @all)`;
  const { given } = problem;
  return `${problem.module} reads ${problem.value} as ${article(problem.type)}, but berth.json gives ${node} ${valueWords(given.value)} (values.${given.from}.${problem.value}), ${article(typeOf(given.value))}`;
}

/**
 * A value berth.json gives a node that no module of the catalog declares: a typo, or a
 * module not written yet; `meant` the closest name one declares.
 */
export function undeclaredWords(node: string, name: string, given: Given, meant?: string): string {
  return `berth.json gives ${node} the value ${name} (values.${given.from}.${name}), which no module of the catalog declares${meant === undefined ? '' : `; did you mean ${meant}?`}`;
}
