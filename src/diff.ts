/**
 * Unified diffs of configuration files, for previews: what a machine holds against what
 * berth writes, as GNU `diff -u` would show it, and never holding a secret.
 *
 * The diff itself is Myers's, by jsdiff: O((n+m)·d) for d differing lines, where the
 * longest-common-subsequence table it replaced cost n·m in time and memory. In the
 * bundle jsdiff is kept as text and made a module on its first call (scripts/build.mjs),
 * so commands that show no diff never parse it.
 */
import { structuredPatch } from 'diff';

/**
 * Past this many differing lines berth does not work the diff out: Myers's cost grows
 * with their square, and a file that far from berth's is better read whole. A count,
 * never a time, so that a preview and its act always agree on the diff.
 */
const MOST_EDITS = 4_000;

/**
 * The unified diff from what a machine holds to what berth writes, exactly as GNU
 * `diff -u` writes it after its two label lines; empty when the texts are equal.
 * `shownDiff` (diff-shown.ts) makes what a preview shows of it.
 */
export function unifiedDiff(
  held: string,
  wanted: string,
  labels: { held: string; wanted: string },
): string[] {
  if (held === wanted) return [];
  const head = [`--- ${labels.held}`, `+++ ${labels.wanted}`];
  const a = linesOf(held);
  const b = linesOf(wanted);
  // Myers gives up only after the work of all those edits; lines not held in common
  // say far sooner that there are too many.
  const patch =
    a.length + b.length - 2 * inCommon(a, b) > MOST_EDITS
      ? undefined
      : structuredPatch('', '', held, wanted, undefined, undefined, {
          context: 3,
          maxEditLength: MOST_EDITS,
        });
  if (!patch) {
    return [
      ...head,
      `(${a.length} lines against ${b.length}: over ${MOST_EDITS} lines differ, too many to show)`,
    ];
  }
  const out = head;
  for (const hunk of patch.hunks) {
    out.push(
      `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`,
      ...hunk.lines,
    );
  }
  return out;
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** How many lines the two have in common, in any order: no diff keeps more of them. */
function inCommon(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of b) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      common++;
      counts.set(line, left - 1);
    }
  }
  return common;
}

/**
 * A hunk's range as GNU writes it: the count left out when it is 1, and an empty side
 * named by the line before it (`-0,0` for an empty file; jsdiff says `-1,0`).
 */
export function range(start: number, count: number): string {
  if (count === 1) return `${start}`;
  return `${count === 0 ? start - 1 : start},${count}`;
}

/** Text with each secret value in it replaced by `[secret NAME]`, for showing. */
export function hideSecrets(text: string, values: readonly (readonly [string, string])[]): string {
  let shown = text;
  // Longest first: a value inside another must not leave part of the longer one shown.
  const byLength = [...values]
    .filter(([, value]) => value.length > 0)
    .sort(([, a], [, b]) => b.length - a.length);
  for (const [name, value] of byLength) shown = shown.replaceAll(value, `[secret ${name}]`);
  return shown;
}
