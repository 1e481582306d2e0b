import * as v from 'valibot';
import { KEY_SECRET_KINDS } from '../keys/kinds.ts';
import { FACT_NAMES } from './facts.ts';
import { UnresolvedSchema } from './unresolved.ts';
import { VALUE_TYPES, ValueSchema } from './value-type.ts';

/**
 * What stands in the way of a node's act, as a value: its kind (`because`, the planners'
 * kebab-case; its code is BLOCKER_CODES's) and the facts its words need, which are made
 * from it at the edge (src/words/blockers.ts). The node it stands on is said by what
 * carries it (a node's report, a refusal). `words` in a link, key or certificate blocker
 * is what another part said of the file (the survey, the key reader), carried as said.
 */
const of = <const B extends string, const E extends v.ObjectEntries>(because: B, entries: E) =>
  v.object({ because: v.literal(because), ...entries });

/** A value berth.json gives a node, and the key of `values` it is under. */
const GivenSchema = v.object({ value: ValueSchema, from: v.string() });

/** A key secret's file, or the vault's value, and what the key reader said of it. */
const keyFile = {
  module: v.string(),
  secret: v.string(),
  path: v.string(),
  words: v.string(),
};

export const BlockerSchema = v.variant('because', [
  // The module and what it needs.
  of('does-not-resolve', { module: v.string(), unresolved: UnresolvedSchema }),
  of('needs-not-running', { module: v.string(), needs: v.array(v.string()) }),
  /** What the machine holds of a module berth does not manage. */
  of('held-not-managed', {
    module: v.string(),
    held: v.variant('kind', [
      v.object({ kind: v.literal('data'), paths: v.array(v.string()) }),
      v.object({ kind: v.literal('secret'), names: v.array(v.string()) }),
      v.object({ kind: v.literal('file'), paths: v.array(v.string()) }),
    ]),
  }),
  // What the machine holds.
  of('secret-differs', {
    module: v.string(),
    secret: v.string(),
    path: v.string(),
  }),
  /** A path through a link another user could have placed: the survey's words. */
  of('link', { module: v.string(), path: v.string(), words: v.string() }),
  /** A file berth writes names an owner or group the machine does not know. */
  of('no-such-account', {
    module: v.string(),
    kind: v.picklist(['user', 'group']),
    name: v.string(),
    path: v.string(),
  }),
  // A take's own: the account, and `--mint`.
  of('account-stale', {
    module: v.string(),
    node: v.string(),
    age: v.number(),
    flip: v.number(),
  }),
  ...(['mint-not-a-secret', 'mint-found', 'mint-kept', 'mint-over-data'] as const).map((because) =>
    of(because, { module: v.string(), secret: v.string() }),
  ),
  // Packages.
  /** The node's lists do not offer the package, or not the version pinned. */
  of('package-unavailable', {
    module: v.string(),
    package: v.string(),
    version: v.optional(v.string()),
    offered: v.array(v.string()),
    /** The lists were refreshed just now: another refresh would not find it. */
    refreshed: v.optional(v.literal(true)),
  }),
  /** `found`: a package manager berth does not know. */
  of('no-package-manager', { module: v.string(), found: v.optional(v.string()) }),
  /** A rooted node whose root is not `/`: no packages of its own. */
  of('packages-not-here', { module: v.string(), root: v.string() }),
  /** The package manager's own `E:` lines. */
  of('package-refused', { module: v.string(), errors: v.array(v.string()) }),
  of('package-malformed', {
    module: v.string(),
    package: v.optional(v.string()),
    what: v.picklist(['name', 'version', 'hash']),
    value: v.string(),
  }),
  // Values and facts.
  of('value-missing', { module: v.string(), value: v.string() }),
  of('value-wrong-type', {
    module: v.string(),
    value: v.string(),
    type: v.picklist(VALUE_TYPES),
    given: GivenSchema,
  }),
  /** A value berth.json gives that no module declares; a take names its module. */
  of('value-undeclared', {
    module: v.optional(v.string()),
    value: v.string(),
    given: GivenSchema,
    meant: v.optional(v.string()),
  }),
  of('fact-unknown', { module: v.string(), path: v.string(), fact: v.picklist(FACT_NAMES) }),
  // Keys and certificates.
  /** `kept`: the vault's value, not the node's file, is no key of the kind. */
  of('not-a-key', {
    ...keyFile,
    kind: v.picklist(KEY_SECRET_KINDS),
    kept: v.optional(v.literal(true)),
  }),
  of('certificate-refused', keyFile),
  of('certificate-name', keyFile),
]);
export type Blocker = v.InferOutput<typeof BlockerSchema>;
