import * as v from 'valibot';
import { BlockerSchema } from './blocker.ts';
import { BlockerKindSchema, CodeSchema } from './codes.ts';

/**
 * A command's typed result, as `--json` prints it and the Command API answers it: the
 * seed's `said` and `refused`, unchanged, with what a script needs beside them, so that
 * no script parses `said`. `format_version` changes when a field changes meaning.
 */
export const FORMAT_VERSION = 1;

/** A command's own `--json` fields in the one envelope every command prints: `format_version` first. */
export function enveloped<T extends object>(
  fields: T,
): { format_version: typeof FORMAT_VERSION } & T {
  return { format_version: FORMAT_VERSION, ...fields };
}

export const STEP_KINDS = [
  'mkdir',
  'mint',
  'restore',
  'keep',
  'rotate',
  'renew',
  'write',
  'package',
  'unhold',
  'refresh',
  'setup',
  'start',
  'reload',
  'stop',
  'manage',
  'release',
] as const;

/** A package a step installs, at exactly `version`; `from` the version it replaces. */
export const PackageMoveSchema = v.object({
  package: v.string(),
  version: v.string(),
  from: v.optional(v.string()),
});

/**
 * One step of a node's plan: what it does, to which module, at which path; a `package`
 * step names the package, its exact version (`from` the one it replaces), how (`install`,
 * `upgrade`, `downgrade`) and what is installed with it; a `rotate` step the new key's kid.
 */
export const StepReportSchema = v.object({
  kind: v.picklist(STEP_KINDS),
  module: v.string(),
  path: v.optional(v.string()),
  secret: v.optional(v.string()),
  package: v.optional(v.string()),
  version: v.optional(v.string()),
  from: v.optional(v.string()),
  how: v.optional(v.picklist(['install', 'upgrade', 'downgrade', 'remove', 'purge'])),
  with: v.optional(v.array(PackageMoveSchema)),
  /** A rotation's new key, by its kid: the key the act places (the kid is public). */
  kid: v.optional(v.string()),
  /** Why the step is planned, when a code says it: a start whose check passed its deadline. */
  code: v.optional(v.picklist(['hook_timeout'])),
});
export type StepReport = v.InferOutput<typeof StepReportSchema>;

/**
 * What stands in the way of a node's act, as the answer carries it: its code, which a
 * script matches (`kind` is the same in the planners' kebab-case, kept as it was), and
 * words for people, rendered at the edge from the blocker's value (src/model/blocker.ts).
 */
export const BlockerReportSchema = v.object({
  code: CodeSchema,
  kind: BlockerKindSchema,
  module: v.optional(v.string()),
  path: v.optional(v.string()),
  /** A package blocker's package, the version pinned, and the versions the lists offer. */
  package: v.optional(v.string()),
  version: v.optional(v.string()),
  offered: v.optional(v.array(v.string())),
  words: v.string(),
});
export type BlockerReport = v.InferOutput<typeof BlockerReportSchema>;

/**
 * How a node's command ended: previewed (nothing done), done, refused (nothing done, or
 * a record the command keeps: see `said`), failed at a step (what was done is in `said`),
 * or, in a target's rolling act, not begun (a batch before it had a node fail).
 */
export const NodeOutcomeSchema = v.picklist([
  'previewed',
  'done',
  'refused',
  'failed',
  'not-begun',
]);
export type NodeOutcome = v.InferOutput<typeof NodeOutcomeSchema>;

export const NodeReportSchema = v.object({
  /** The node's preview digest: on a take or converge, preview or act. */
  digest: v.optional(v.string()),
  /** A preview's steps, or an act's steps done. */
  steps: v.array(StepReportSchema),
  blockers: v.array(BlockerReportSchema),
  outcome: NodeOutcomeSchema,
  /** Why the node was refused or failed, when it was: beside its words in `refused`. */
  code: v.optional(CodeSchema),
  /** How long the node took, in milliseconds: its preview, or its act. */
  ms: v.optional(v.number()),
});
export type NodeReport = v.InferOutput<typeof NodeReportSchema>;

/** A node's part of the typed result as commands return it: its blockers as values. */
export const NodeResultSchema = v.object({
  ...NodeReportSchema.entries,
  blockers: v.array(BlockerSchema),
});
export type NodeResult = v.InferOutput<typeof NodeResultSchema>;

export const CommandAnswerSchema = v.object({
  format_version: v.literal(FORMAT_VERSION),
  said: v.pipe(v.string(), v.description('What the command line would have printed')),
  refused: v.optional(
    v.pipe(v.string(), v.description("The command's refusal, as the command line says it")),
  ),
  /** Beside `refused`, always: why, as a code from one closed list. */
  code: v.optional(CodeSchema),
  /** On a preview: the digest its act names. */
  digest: v.optional(v.pipe(v.string(), v.description('On a preview: the digest its act names'))),
  /** By node name; empty when the command was refused before it reached a node. */
  nodes: v.pipe(
    v.record(v.string(), NodeReportSchema),
    v.description("Each node's digest, steps, blockers and outcome, by node name"),
  ),
});
export type CommandAnswer = v.InferOutput<typeof CommandAnswerSchema>;
