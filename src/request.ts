import * as v from 'valibot';
import { clip } from './clip.ts';
import { type Code, CodeSchema } from './codes.ts';
import type { CommandResult } from './commands/results.ts';
import type { BlockerReport, NodeReport, StepReport } from './result.ts';
import { describeIssues } from './schema-issues.ts';

/**
 * How many nodes of a target at once (`parallel`) or at a time (`batch`): a whole number
 * from 1. The command line's `--parallel` and `--batch` are checked by this same schema.
 */
export const NodeCountSchema = v.pipe(
  v.number(),
  v.safeInteger((issue) => `a whole number from 1, not ${issue.received}`),
  v.minValue(1, (issue) => `a whole number from 1, not ${issue.received}`),
);

/**
 * The command request (docs/api.md): one shape for every route and every
 * command. Omitted strings decode to empty so that "node is needed" is said by the
 * required-field check, not by the decoder. Unknown fields are dropped, not refused.
 * `parallel` and `batch` are berth's own, for a target of several nodes.
 */
export const CommandRequestSchema = v.object({
  node: v.optional(v.string(), ''),
  module: v.optional(v.string(), ''),
  yes: v.optional(v.boolean(), false),
  digest: v.optional(v.string()),
  filter: v.optional(v.string()),
  parallel: v.optional(NodeCountSchema),
  batch: v.optional(NodeCountSchema),
});

export type CommandRequest = v.InferOutput<typeof CommandRequestSchema>;

/**
 * What a command function returns: what it did as a typed value (`result`), or, for a
 * command not moved to one yet, its words (`said`); and its refusal if it refused.
 * Read the words with `saidOf` (src/said.ts), never `said` alone.
 */
export interface Outcome {
  said?: string;
  result?: CommandResult;
  error?: string;
  /** Beside `error`, always: why, as a code from the closed list (src/codes.ts). */
  code?: Code;
  /** The node's part of the typed result; `failed` when a step of the act failed. */
  report?: {
    digest?: string;
    steps: StepReport[];
    blockers: BlockerReport[];
    failed?: true;
  };
  /**
   * Set when the act told its steps through `progress` as it did them: the part of
   * `said` not told so, which the command line prints at the end.
   */
  untold?: string;
  /**
   * What the runner made of the command on its target (one node or several): the
   * preview's digest, and each node's part of the typed result, by name.
   */
  target?: { digest?: string; nodes: Record<string, NodeReport> };
}

/** Every other answer (400, 401, 404, 413, 503): why the request was not carried out. */
export const RefusalSchema = v.object({
  refused: v.pipe(v.string(), v.description('Why, in words')),
  code: CodeSchema,
});

export type Decoded = { ok: true; request: CommandRequest } | { ok: false; message: string };

/** Decodes a request body: JSON first, then the request's shape. */
export function decodeRequest(body: string): Decoded {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    // V8 quotes a few characters of the input; kept short whatever a later V8 quotes.
    return { ok: false, message: clip((error as Error).message, 200) };
  }
  // valibot's object schema takes an array for an object (and then reads
  // Array.prototype.filter as `filter`), so an array is refused here, in the same words.
  if (Array.isArray(json)) return { ok: false, message: 'expected an object, got a list' };
  const result = v.safeParse(CommandRequestSchema, json);
  if (result.success) return { ok: true, request: result.output };
  return { ok: false, message: describeIssues(result.issues, CommandRequestSchema) };
}
