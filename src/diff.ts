/** Unified diffs of configuration files, for previews: short, and never holding a secret. */

/** The most lines a preview shows of one file's diff. */
export const DIFF_LINES = 40;
/** Beyond this many lines a side, berth does not diff (configuration is shorter). */
const DIFF_LIMIT = 5_000;

type Edit = { op: ' ' | '-' | '+'; line: string; a: number; b: number };

/** The line edits from `a` to `b`, by a longest common subsequence. */
function edits(a: readonly string[], b: readonly string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  // lengths[i][j]: the LCS of a[i..] and b[j..], in one flat array.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[at(i, j)] =
        a[i] === b[j]
          ? (lengths[at(i + 1, j + 1)] as number) + 1
          : Math.max(lengths[at(i + 1, j)] as number, lengths[at(i, j + 1)] as number);
    }
  }
  const out: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: ' ', line: a[i] as string, a: i++, b: j++ });
    } else if (
      i < n &&
      (j >= m || (lengths[at(i + 1, j)] as number) >= (lengths[at(i, j + 1)] as number))
    ) {
      out.push({ op: '-', line: a[i] as string, a: i++, b: j });
    } else {
      out.push({ op: '+', line: b[j] as string, a: i, b: j++ });
    }
  }
  return out;
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * A unified diff from what a machine holds to what berth writes, three lines of context,
 * at most `limit` lines (then a line saying how many more). Empty when the texts are equal.
 */
export function unifiedDiff(
  held: string,
  wanted: string,
  labels: { held: string; wanted: string },
  limit = DIFF_LINES,
): string[] {
  if (held === wanted) return [];
  const a = linesOf(held);
  const b = linesOf(wanted);
  if (a.length > DIFF_LIMIT || b.length > DIFF_LIMIT)
    return [`(${a.length} lines against ${b.length}: too long to show a diff)`];
  const all = edits(a, b);
  const changed = all.map((edit, index) => (edit.op === ' ' ? -1 : index)).filter((i) => i >= 0);
  if (changed.length === 0) return ['(they differ only in how the last line ends)'];
  // Hunks: runs of changes with up to 3 lines of context around, merged when they touch.
  const hunks: [number, number][] = [];
  for (const index of changed) {
    const start = Math.max(0, index - 3);
    const end = Math.min(all.length, index + 4);
    const last = hunks.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else hunks.push([start, end]);
  }
  const out = [`--- ${labels.held}`, `+++ ${labels.wanted}`];
  for (const [start, end] of hunks) {
    const part = all.slice(start, end);
    const first = part[0] as Edit;
    const aCount = part.filter((edit) => edit.op !== '+').length;
    const bCount = part.filter((edit) => edit.op !== '-').length;
    out.push(`@@ -${first.a + 1},${aCount} +${first.b + 1},${bCount} @@`);
    for (const edit of part) out.push(`${edit.op}${edit.line}`);
  }
  if (out.length <= limit) return out;
  return [...out.slice(0, limit), `… ${out.length - limit} more lines of diff`];
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
