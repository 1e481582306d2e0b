import * as v from 'valibot';

/** A module's own reason not to resolve, not one of a module below it. */
const OwnReasonSchema = v.variant('why', [
  v.object({ why: v.literal('not-in-catalog'), problem: v.string() }),
  v.object({ why: v.literal('not-valid'), problem: v.string() }),
  v.object({ why: v.literal('need-not-in-catalog'), need: v.string() }),
  v.object({ why: v.literal('need-not-assigned'), need: v.string() }),
]);

/**
 * Why a module does not resolve on a node, as a value: the words are made from it. A need
 * that does not resolve names the module, however far down, whose own reason it is, and
 * how far down that is: the value stays small whatever the depth of the needs.
 */
export const UnresolvedSchema = v.variant('why', [
  ...OwnReasonSchema.options,
  v.object({
    why: v.literal('need-does-not-resolve'),
    need: v.string(),
    at: v.string(),
    depth: v.number(),
    below: OwnReasonSchema,
  }),
  v.object({ why: v.literal('cycle'), cycle: v.array(v.string()) }),
]);
export type Unresolved = v.InferOutput<typeof UnresolvedSchema>;
