import * as v from 'valibot';

/** What a command ran as, in the words the command line types: `converge web1 --filter redis`. */
export const AskedSchema = v.object({
  command: v.string(),
  node: v.string(),
  module: v.optional(v.string()),
  filter: v.optional(v.string()),
});
export type Asked = v.InferOutput<typeof AskedSchema>;
