import * as v from 'valibot';
import { AskedSchema } from './asked.ts';

/**
 * What changed on a node between a preview and an act on its digest, as a value: one kind
 * for each thing a stale digest's refusal can say, with the facts its words need; the words
 * are made from it at the edge (src/words/changes.ts). The node is said by the refusal that
 * carries it. A value, fact or version is as the previews kept it: never a secret value.
 */
const of = <const K extends string, const E extends v.ObjectEntries>(kind: K, entries: E) =>
  v.object({ kind: v.literal(kind), ...entries });

/** A value or fact as a preview read it; absent when it was not given. */
const read = v.optional(v.unknown());

export const ChangeSchema = v.variant('kind', [
  /** The digest is of a preview of another command or node; `earlier`: of a scope berth no longer reads. */
  of('other-preview', {
    was: v.union([AskedSchema, v.object({ node: v.string(), earlier: v.literal(true) })]),
    is: AskedSchema,
  }),
  // The assignment, the record and the definition.
  of('assigned', { module: v.string() }),
  of('unassigned', { module: v.string() }),
  of('managed', { module: v.string() }),
  of('unmanaged', { module: v.string() }),
  of('record', { module: v.string() }),
  of('definition', { module: v.string() }),
  // What the machine holds, and what berth writes.
  of('data', { module: v.string(), path: v.string(), found: v.boolean() }),
  of('secret', { module: v.string(), secret: v.string() }),
  of('file', { path: v.string() }),
  of('written', { module: v.string(), path: v.string() }),
  // Values and facts.
  of('value', { module: v.string(), name: v.string(), was: read, is: read }),
  of('fact', { name: v.string(), was: read, is: read }),
  // Packages: installed or removed by hand, or lists (a mirror) that moved.
  of('package-removed', { package: v.string(), was: v.string() }),
  of('package-installed', { package: v.string(), version: v.string() }),
  of('package-version', { package: v.string(), was: v.string(), is: v.string() }),
  /** The lists' candidate; absent: none. */
  of('package-candidate', {
    package: v.string(),
    was: v.optional(v.string()),
    is: v.optional(v.string()),
  }),
  of('package-offered', { package: v.string(), was: v.array(v.string()), is: v.array(v.string()) }),
  /** The same version with other bits: each archive's SHA256. */
  of('package-bits', {
    package: v.string(),
    version: v.string(),
    was: v.array(v.string()),
    is: v.array(v.string()),
  }),
  of('package-simulation', { module: v.string() }),
  // `--rotate`.
  of('rotation-added', { module: v.string(), secret: v.string() }),
  of('rotation-dropped', { module: v.string(), secret: v.string() }),
  /** The kid of the key a secret rotates to; `is` absent: no key now. */
  of('rotation-key', {
    module: v.string(),
    secret: v.string(),
    was: v.string(),
    is: v.optional(v.string()),
  }),
  // Checks, by their exit.
  of('check', { module: v.string(), code: v.number() }),
  of('check-dropped', { module: v.string() }),
]);
export type Change = v.InferOutput<typeof ChangeSchema>;
