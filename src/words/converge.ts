import type { ConvergePlan } from '../commands/converge-plan.ts';
import type { DiffShownOnce } from '../diff/diff-shown.ts';
import { blockerWords } from './blockers.ts';
import { listsOldWords } from './packages.ts';
import { previewWords } from './steps.ts';

/**
 * A converge preview in words: each module's steps, the blockers, and the digest; each
 * file's diff whole with `fullDiff`, else its settings first and about 40 lines.
 */
export function describePreview(
  title: string,
  node: string,
  plan: ConvergePlan,
  { nothingToDo, digest }: { nothingToDo: boolean; digest: string },
  fullDiff = false,
  shownOnce?: DiffShownOnce,
) {
  const lines = [title];
  for (const { module, action, steps } of plan.modules) {
    lines.push(`${action} ${module}:`);
    for (const step of steps) lines.push(`  ${previewWords(step, node, fullDiff, shownOnce)}`);
  }
  if (plan.listsDaysOld !== undefined) lines.push(listsOldWords(node, plan.listsDaysOld));
  for (const blocker of plan.blockers) lines.push(`blocked: ${blockerWords(blocker, node)}`);
  if (plan.blockers.length > 0) lines.push('the act will be refused while a blocker stands');
  if (nothingToDo) lines.push(`${node} is as assigned: nothing to do, so yes alone is enough`);
  lines.push(`digest ${digest}`);
  return lines.join('\n');
}
