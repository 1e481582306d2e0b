import * as v from 'valibot';
import { BlockerSchema } from './blocker.ts';
import { StepSchema } from './steps.ts';

/**
 * A converge preview's typed result as the stores keep it with a node's newest survey: its
 * plan (each module's steps, each file's diff whole, and the blockers), its digest, and
 * the node's facts when the plan read them. Its words are made when it is read.
 */
export const ConvergePreviewResultSchema = v.object({
  command: v.literal('converge'),
  node: v.string(),
  filter: v.optional(v.string()),
  preview: v.object({
    plan: v.object({
      modules: v.array(
        v.object({
          module: v.string(),
          action: v.picklist(['install', 'update', 'release']),
          steps: v.array(StepSchema),
        }),
      ),
      blockers: v.array(BlockerSchema),
      listsDaysOld: v.optional(v.number()),
    }),
    digest: v.string(),
    nothingToDo: v.boolean(),
    refreshed: v.optional(v.literal(true)),
    facts: v.optional(v.record(v.string(), v.string())),
  }),
});
export type ConvergePreviewResult = v.InferOutput<typeof ConvergePreviewResultSchema>;
