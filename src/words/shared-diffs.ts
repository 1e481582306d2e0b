import type { Outcome } from '../commands/outcome.ts';
import { heldLabel } from '../commands/steps/file-diff.ts';
import { type DiffShownOnce, shownDiff } from '../diff/diff-shown.ts';

/** One diff the same on several nodes of a target: the file, the nodes, the diff. */
interface SharedDiff {
  path: string;
  nodes: string[];
  /** The diff as the first of the nodes has it. */
  diff: readonly string[];
}

/**
 * The diffs of a target's preview that are the same on several nodes (five web nodes
 * whose nginx config differs alike): each is shown once, naming its nodes, and each
 * node's preview says so where the diff would be.
 */
export class SharedDiffs {
  private readonly shared = new Map<string, SharedDiff>();

  constructor(outcomes: ReadonlyMap<string, Outcome>) {
    const seen = new Map<string, SharedDiff>();
    for (const [node, outcome] of outcomes)
      for (const { path, diff } of diffsOf(outcome)) {
        const key = keyOf(node, path, diff);
        const found = seen.get(key);
        if (found) found.nodes.push(node);
        else seen.set(key, { path, nodes: [node], diff });
      }
    for (const [key, item] of seen) if (item.nodes.length > 1) this.shared.set(key, item);
  }

  /** For one node's preview: what stands where a diff shown once would be. */
  shownOnceFor(node: string): DiffShownOnce {
    return (path, diff) => {
      const item = this.shared.get(keyOf(node, path, diff));
      return item && `the same diff on ${item.nodes.join(', ')}: shown once, after the nodes`;
    };
  }

  /** Each shared diff once, under its nodes and file; empty when there is none. */
  words(fullDiff: boolean): string {
    if (this.shared.size === 0) return '';
    const lines = ['the same diff on several nodes:'];
    for (const { path, nodes, diff } of this.shared.values()) {
      const [first, ...rest] = diff;
      const held = `--- ${heldLabel(path, nodes[0] as string)}`;
      const named = first === held ? [`--- ${path} on ${nodes.join(', ')}`, ...rest] : diff;
      lines.push(`${nodes.join(', ')}: ${path}`);
      for (const line of shownDiff(named, fullDiff)) lines.push(`    ${line}`);
    }
    return lines.join('\n');
  }
}

/** A diff compared across nodes: the file, and the diff without the node its label names. */
function keyOf(node: string, path: string, diff: readonly string[]): string {
  const [first, ...rest] = diff;
  const label = first === `--- ${heldLabel(path, node)}` ? `--- ${path}` : first;
  return JSON.stringify([path, label, ...rest]);
}

/** The files a node's take or converge preview shows a diff of, from its typed result. */
function diffsOf(outcome: Outcome): { path: string; diff: readonly string[] }[] {
  const { result } = outcome;
  if (result?.command === 'converge' && 'preview' in result)
    return result.preview.plan.modules.flatMap(({ steps }) =>
      steps.flatMap((step) =>
        step.do === 'write' && step.why.because === 'differs'
          ? [{ path: step.path, diff: step.why.diff }]
          : [],
      ),
    );
  if (result?.command === 'take' && 'preview' in result)
    return (result.preview.plan.files ?? []).flatMap((file) =>
      file.why.because === 'differs' ? [{ path: file.path, diff: file.why.diff }] : [],
    );
  return [];
}
