import * as v from 'valibot';
import { AskedSchema } from './asked.ts';
import { BlockerSchema } from './blocker.ts';
import { ChangeSchema } from './change.ts';
import { CodeSchema } from './codes.ts';
import { code, of } from './refusal-kind.ts';
import { NAME_REFUSALS, TARGET_REFUSALS } from './target-refusal.ts';
import { UnresolvedSchema } from './unresolved.ts';

/**
 * Why berth refused, or where an act that began stopped, as a value: each kind with its
 * code (the closed list of codes.ts) and the facts its words need. The words are made
 * from it at the edge, by one renderer (src/words/refusals.ts); what another program said
 * (ssh, apt, PostgreSQL, a file system, a parse of berth.json) is carried as it said it.
 */
const codes = <const C extends readonly [string, ...string[]]>(...values: C) => v.picklist(values);

/**
 * The stores, in their own words: a lock not had in time, or a store that failed;
 * `unforeseen` when what failed was not a store's own error.
 */
const StoresRefusalSchema = of('stores', codes('lock_timeout', 'stores_unavailable'), {
  message: v.string(),
  unforeseen: v.optional(v.literal(true)),
});

/** The refusals a single command, a target or the stores make: the leaves of the union. */
const LEAVES = [
  // The request and what it names.
  of('fields-missing', code('fields_missing'), { needsModule: v.boolean() }),
  ...NAME_REFUSALS,
  of('secret-name', code('invalid_name'), { given: v.string() }),
  ...TARGET_REFUSALS,
  /** `what`: the node alone (`it`), a name of the target, or every node of it. */
  of('not-granted', code('not_granted'), {
    subject: v.string(),
    command: v.string(),
    target: v.string(),
    what: v.union([v.object({ name: v.string() }), v.picklist(['it', 'every-node'])]),
  }),
  of('refresh-on-act', code('refresh_not_on_act'), { command: v.string(), target: v.string() }),
  of('check-needs-target', code('invalid_target'), {}),
  of('secret-usage', code('usage'), {}),
  of('no-module', code('unknown_module'), { module: v.string(), meant: v.optional(v.string()) }),
  // What berth was given to work with: berth.json, the stores, the vault.
  of('config', code('invalid_config'), { message: v.string() }),
  StoresRefusalSchema,
  of('vault', code('vault_unopened'), { message: v.string() }),
  of('rekey-unopened', code('vault_unopened'), { unopened: v.array(v.string()) }),
  // A command's own.
  of('module-entry', codes('unknown_module', 'invalid_module'), {
    module: v.string(),
    node: v.string(),
    problem: v.string(),
    meant: v.optional(v.string()),
  }),
  of('does-not-resolve', code('does_not_resolve'), {
    module: v.string(),
    node: v.string(),
    unresolved: UnresolvedSchema,
    meant: v.optional(v.string()),
  }),
  of('already-managed', code('already_managed'), { module: v.string(), node: v.string() }),
  of('not-adopted', code('not_adopted'), { node: v.string() }),
  of('not-in-account', code('not_in_account'), { module: v.string(), node: v.string() }),
  of('not-managed', code('not_managed'), { module: v.string(), node: v.string() }),
  of('still-assigned', code('still_assigned'), { module: v.string(), node: v.string() }),
  of('declared-in-config', code('declared_in_config'), {
    module: v.string(),
    node: v.string(),
    from: v.array(v.string()),
  }),
  of('not-assigned', code('not_assigned'), {
    module: v.string(),
    node: v.string(),
    meant: v.optional(v.string()),
  }),
  of('still-needed', code('still_needed'), {
    module: v.string(),
    node: v.string(),
    neededBy: v.array(v.string()),
  }),
  of('secret-not-kept', code('secret_not_kept'), {
    secret: v.string(),
    module: v.string(),
    node: v.string(),
  }),
  /** A secret the take would keep, unreadable: the machine's reason, or not a file at all. */
  of('secret-unreadable', code('secret_unreadable'), {
    secret: v.string(),
    module: v.string(),
    node: v.string(),
    path: v.string(),
    why: v.union([v.object({ reason: v.string() }), v.picklist(['directory', 'other'])]),
  }),
  of('secret-changed', code('account_stale'), {
    secret: v.string(),
    module: v.string(),
    node: v.string(),
  }),
  of('rotate-unknown', code('rotate_unknown'), {
    name: v.string(),
    node: v.string(),
    meant: v.optional(v.string()),
  }),
  of('rotate-not-a-key', code('rotate_not_a_key'), {
    name: v.string(),
    modules: v.array(v.string()),
  }),
  of('check-not-run', codes('unreachable', 'hook_failed'), { message: v.string() }),
  of('refresh-busy', code('refresh_failed'), {
    node: v.string(),
    command: v.string(),
    pid: v.number(),
  }),
  /** apt's errors, or the machine's when it could not be asked. */
  of('refresh-failed', code('refresh_failed'), { node: v.string(), message: v.string() }),
  // The gate between a preview and its act.
  of('digest-needed', code('digest_needed'), { asked: AskedSchema }),
  of('invalid-digest', code('invalid_digest'), { given: v.string() }),
  /** A digest that names no preview of now: what changed on the node since, as berth could tell it. */
  of('digest-stale', code('digest_stale'), {
    given: v.string(),
    node: v.string(),
    changes: v.array(ChangeSchema),
  }),
  /**
   * Of a target of several, the digest names no preview of now, and nothing was done on any
   * node: each node whose preview changed, with what changed (none told: its preview did);
   * `changes` absent when the node was not in that preview.
   */
  of('digest-stale-nodes', code('digest_stale'), {
    given: v.string(),
    target: v.string(),
    nodes: v.array(v.object({ node: v.string(), changes: v.optional(v.array(ChangeSchema)) })),
  }),
  /** Of a target of several, no node keeps the preview the digest names. */
  of('digest-unkept', code('digest_stale'), { given: v.string(), target: v.string() }),
  of('plan-acted-on', code('plan_acted_on'), { file: v.string(), at: v.string(), by: v.string() }),
  of('plan-gone', code('digest_stale'), { file: v.string(), nodes: v.array(v.string()) }),
  of('plan-edited', code('plan_edited'), { file: v.string() }),
  of('plan-elsewhere', code('plan_elsewhere'), {
    file: v.string(),
    target: v.string(),
    madeWith: v.string(),
    using: v.string(),
  }),
  /** A preview's plan file (`--out`) that could not be written, and the file system's why. */
  of('plan-unwritten', code('failed'), { file: v.string(), message: v.string() }),
  /** A converge act while blockers stand: each of them. */
  of('blocked', code('blocked'), { node: v.string(), blockers: v.array(BlockerSchema) }),
  /** A take act while a blocker stands: the first, whose code is the refusal's. */
  of('blocker', CodeSchema, { node: v.string(), blocker: BlockerSchema }),
  // An act that began, and where it stopped.
  of(
    'stopped',
    codes(
      'interrupted',
      'unreachable',
      'hook_failed',
      'hook_timeout',
      'package_failed',
      'step_failed',
      'refresh_failed',
    ),
    {
      command: v.picklist(['converge', 'take']),
      node: v.string(),
      module: v.string(),
      /** Told to stop between two steps, or a step failed. */
      how: v.picklist(['stopped', 'failed']),
      /** Why, in the words it was told with; or what stands in the way found at the step. */
      why: v.union([v.string(), v.object({ blockers: v.array(BlockerSchema) })]),
    },
  ),
  of('unreachable', code('unreachable'), { node: v.string(), message: v.string() }),
  /** A failure berth did not foresee inside a command, in the words it was thrown with. */
  of('failed', code('failed'), { command: v.string(), message: v.string() }),
] as const;

const LeafSchema = v.variant('kind', LEAVES);
/** A refusal of one command on one node, or of a request before any: no other wrapped in it. */
export type LeafRefusal = v.InferOutput<typeof LeafSchema>;

/**
 * A node's act whose journal entry could not be written: done, or refused or failed with
 * its own refusal (`refusal`), and the store's words.
 */
const UnjournaledSchema = of('unjournaled', CodeSchema, {
  command: v.string(),
  ended: v.picklist(['done', 'refused', 'failed']),
  message: v.string(),
  refusal: v.optional(LeafSchema),
});

/** A node's refusal as a target of several tells it: its own, or not begun. */
const NodeRefusalSchema = v.object({
  node: v.string(),
  refusal: v.optional(v.variant('kind', [...LEAVES, UnjournaledSchema])),
});

export const RefusalSchema = v.variant('kind', [
  ...LEAVES,
  UnjournaledSchema,
  /** The stores failed for one node of a target of several. */
  of('node-stores', codes('lock_timeout', 'stores_unavailable'), {
    node: v.string(),
    refusal: StoresRefusalSchema,
  }),
  /**
   * A target of several nodes, some of which refused or failed, or were not begun: each of
   * them; one code when they share one, else `nodes_refused`.
   */
  of('nodes', CodeSchema, { nodes: v.array(NodeRefusalSchema) }),
]);
export type Refusal = v.InferOutput<typeof RefusalSchema>;
export type NodeRefusal = v.InferOutput<typeof NodeRefusalSchema>;
/** A refusal of one kind. */
export type RefusalOf<K extends Refusal['kind']> = Extract<Refusal, { kind: K }>;
