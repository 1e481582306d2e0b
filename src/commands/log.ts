import * as v from 'valibot';
import { FORMAT_VERSION } from '../model/result.ts';
import { resolveTarget } from '../model/targets.ts';
import { JournalEntrySchema, type JournalQuery } from '../stores/stores.ts';
import type { AnswerFunction } from './command-shape.ts';
import { RefusedSchema, refused, refusedFor } from './reading-answer.ts';

/**
 * `berth log [target] [--since D] [--tail N]`: the journal, oldest first; a line that is
 * no entry (only a hand edit makes one) is kept as it is, with where it is.
 */
export const LogAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    format_version: v.literal(FORMAT_VERSION),
    lines: v.array(
      v.union([
        v.object({ entry: JournalEntrySchema }),
        v.object({ notAnEntry: v.string(), where: v.string() }),
      ]),
    ),
  }),
]);
export type LogAnswer = v.InferOutput<typeof LogAnswerSchema>;

/**
 * The journal: of a target alone (its nodes, and the acts asked for it that reached
 * none), of the last while, its last acts. A target names the nodes berth.json has, and
 * those whose records berth keeps still.
 */
export const log: AnswerFunction<LogAnswer> = async ({ words, options }, deps) => {
  const [target] = words;
  try {
    const query: JournalQuery = { tail: options.tail };
    if (options.since) query.since = new Date(Date.now() - options.since.ms).toISOString();
    if (target !== undefined) {
      await deps.stores.open();
      const { settings } = await deps.loadConfig();
      const kept = await deps.stores.listNodes();
      const nodes = [...new Set([...Object.keys(settings.nodes), ...kept])];
      const targeted = resolveTarget(target, { nodes, groups: settings.groups });
      if (!targeted.ok) return refused(targeted.refusal);
      query.about = [...targeted.nodes, target];
    }
    return { format_version: FORMAT_VERSION, lines: await deps.stores.readJournal(query) };
  } catch (error) {
    return refusedFor(error);
  } finally {
    await deps.stores.close().catch(() => {});
  }
};
