import * as v from 'valibot';
import { clip } from '../utils/clip.ts';
import { describeIssues } from '../utils/schema-issues.ts';
import { CodeSchema } from './codes.ts';
import { NodeReportSchema } from './result.ts';

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

/** Every other answer (400, 401, 404, 413, 503): why the request was not carried out. */
export const RefusalSchema = v.object({
  refused: v.pipe(v.string(), v.description('Why, in words')),
  code: CodeSchema,
  /** A 503 of a command on its nodes: the node whose lock or records could not be had. */
  nodes: v.optional(
    v.pipe(
      v.record(v.string(), NodeReportSchema),
      v.description('On a 503 met at a node: that node, with its code'),
    ),
  ),
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
