import * as v from 'valibot';
import { FORMAT_VERSION } from '../model/result.ts';
import { openAct } from './act.ts';
import type { AnswerFunction, CommandShape } from './command-shape.ts';
import { RefusedSchema, refused } from './reading-answer.ts';
import { readSecret } from './secret.ts';
import { secretText } from './secrets.ts';

/** A kept value, as text (a file's last newline not doubled). */
export const SecretAnswerSchema = v.union([
  RefusedSchema,
  v.object({ format_version: v.literal(FORMAT_VERSION), value: v.string() }),
]);
export type SecretAnswer = v.InferOutput<typeof SecretAnswerSchema>;

/**
 * `berth secret <node> <module> <name>`: the kept value, read through the runner under
 * the node's lock; the act is journaled as who read what, never the value.
 */
export const secretValue: AnswerFunction<SecretAnswer> = async ({ words }, deps) => {
  const [node, module, name, ...more] = words;
  if (node === undefined || module === undefined || name === undefined || more.length > 0)
    return refused({ kind: 'secret-usage', code: 'usage' });
  let value: Uint8Array | undefined;
  const command: CommandShape = {
    name: 'secret',
    needs: ['node', 'module'],
    options: [],
    run: readSecret(name, (kept) => {
      value = kept;
    }),
  };
  try {
    const request = { node, module, yes: false };
    const opened = await openAct(command, request, deps, {
      actor: deps.actor,
      via: 'cli',
      line: {},
    });
    if (opened.kind !== 'ready') return refused(opened.refusal);
    const { refusal } = await opened.run();
    if (refusal !== undefined) return refused(refusal);
    return { format_version: FORMAT_VERSION, value: secretText(value ?? new Uint8Array()) };
  } finally {
    await deps.stores.close();
  }
};
