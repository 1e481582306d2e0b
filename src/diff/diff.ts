/**
 * Unified diffs of configuration files, for previews: what a machine holds against what
 * berth writes, line for line as GNU `diff -u` writes it, of texts whose secrets were
 * masked first (secret-masks.ts).
 *
 * The edits are Myers's, by jsdiff: O((n+m)·d) for d differing lines, where the
 * longest-common-subsequence table it replaced cost n·m in time and memory. Where a run
 * of changes could sit in more than one place (a deleted comment block whose last line
 * equals the line above it), GNU moves it as its `shift_boundaries` does; so does berth,
 * then makes hunks as GNU does. In the bundle jsdiff is kept as text and made a module
 * on its first call (scripts/build.mjs): commands that show no diff never parse it.
 */
import { diffArrays } from 'diff';
import { range } from './hunk-range.ts';

/**
 * Past this many edits among the lines both sides have, berth does not work the diff
 * out: Myers's cost grows with their square (the same lines in another order). A count,
 * never a time, so that a preview and its act always agree on the diff.
 */
const MOST_EDITS = 1_500;
/** Lines of context around a change, as `diff -u`. */
const CONTEXT = 3;
const NO_NEWLINE = '\\ No newline at end of file';

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
  const changed = changedLines(a, b);
  if (!changed) {
    return [
      ...head,
      `(${a.length} lines against ${b.length}: the same lines in too different an order to show a diff)`,
    ];
  }
  shiftBoundaries(a, changed.a, changed.b);
  shiftBoundaries(b, changed.b, changed.a);
  return [...head, ...hunks(a, b, changed)];
}

/** Each line with its newline: a last line without one differs from the same line with it. */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Which lines of each side are changed, by Myers (jsdiff), each side a flag a line with
 * an unchanged sentinel before and after (GNU's layout, which `shiftBoundaries` reads);
 * undefined when the lines both sides have need more than MOST_EDITS edits.
 */
function changedLines(
  a: readonly string[],
  b: readonly string[],
): { a: Uint8Array; b: Uint8Array } | undefined {
  // A line the other side does not have at all is changed whatever the diff: it is left
  // out of Myers's work, as GNU's discard_confusing_lines does, so that settings changed
  // here and there cost as little as one block changed.
  const inA = new Set(a);
  const inB = new Set(b);
  const keptA = indicesWhere(a, (line) => inB.has(line));
  const keptB = indicesWhere(b, (line) => inA.has(line));
  // Myers gives up only after the work of all those edits; the lines left that are not
  // held in common, in any order, say far sooner that there are too many.
  const left = (kept: number[], lines: readonly string[]) => kept.map((i) => lines[i] as string);
  const [restA, restB] = [left(keptA, a), left(keptB, b)];
  if (restA.length + restB.length - 2 * inCommon(restA, restB) > MOST_EDITS) return undefined;
  const edits = diffArrays(restA, restB, { maxEditLength: MOST_EDITS });
  if (!edits) return undefined;
  // Every line is changed but those Myers keeps in common.
  const changed = { a: new Uint8Array(a.length + 2), b: new Uint8Array(b.length + 2) };
  changed.a.fill(1, 1, a.length + 1);
  changed.b.fill(1, 1, b.length + 1);
  let i = 0;
  let j = 0;
  for (const edit of edits) {
    if (edit.removed) i += edit.count;
    else if (edit.added) j += edit.count;
    else {
      for (let k = 0; k < edit.count; k++) {
        changed.a[(keptA[i + k] as number) + 1] = 0;
        changed.b[(keptB[j + k] as number) + 1] = 0;
      }
      i += edit.count;
      j += edit.count;
    }
  }
  return changed;
}

function indicesWhere(lines: readonly string[], keep: (line: string) => boolean): number[] {
  const kept: number[] = [];
  lines.forEach((line, index) => {
    if (keep(line)) kept.push(index);
  });
  return kept;
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
 * GNU diff's `shift_boundaries` (analyze.c), on one side: each run of changed lines is
 * moved up while the line above it equals its last, merging with runs above; then down
 * while its first equals the line below, merging with runs below; then back up to end
 * where a run of the other side's changes ends, if it passed one. Flags are 1-based
 * with unchanged sentinels, as GNU's.
 */
function shiftBoundaries(lines: readonly string[], changed: Uint8Array, other: Uint8Array) {
  const same = (x: number, y: number) => lines[x - 1] === lines[y - 1];
  const end = lines.length + 1;
  let i = 1;
  let j = 1;
  for (;;) {
    // Find the start of the next run, keeping the corresponding point on the other side.
    while (i < end && !changed[i]) {
      while (other[j++]);
      i++;
    }
    if (i === end) break;
    let start = i;
    while (changed[++i]);
    while (other[j]) j++;
    let runLength: number;
    let corresponding: number;
    do {
      runLength = i - start;
      while (start > 1 && same(start - 1, i - 1)) {
        changed[--start] = 1;
        changed[--i] = 0;
        while (changed[start - 1]) start--;
        while (other[--j]);
      }
      corresponding = other[j - 1] ? i : end;
      while (i !== end && same(start, i)) {
        changed[start++] = 0;
        changed[i++] = 1;
        while (changed[i]) i++;
        while (other[++j]) corresponding = i;
      }
    } while (runLength !== i - start);
    while (corresponding < i) {
      changed[--start] = 1;
      changed[--i] = 0;
      while (other[--j]);
    }
  }
}

/** One line of the edit script: its mark and, on each side, its 0-based index. */
interface Edit {
  mark: ' ' | '-' | '+';
  a: number;
  b: number;
}

/** The hunks, as GNU makes them: context around each change, merged when they touch. */
function hunks(
  a: readonly string[],
  b: readonly string[],
  changed: { a: Uint8Array; b: Uint8Array },
): string[] {
  const script: Edit[] = [];
  for (let i = 0, j = 0; i < a.length || j < b.length; ) {
    if (i < a.length && changed.a[i + 1]) script.push({ mark: '-', a: i++, b: j });
    else if (j < b.length && changed.b[j + 1]) script.push({ mark: '+', a: i, b: j++ });
    else script.push({ mark: ' ', a: i++, b: j++ });
  }
  const spans: [number, number][] = [];
  script.forEach((edit, index) => {
    if (edit.mark === ' ') return;
    const start = Math.max(0, index - CONTEXT);
    const stop = Math.min(script.length, index + CONTEXT + 1);
    const last = spans.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], stop);
    else spans.push([start, stop]);
  });
  const out: string[] = [];
  for (const [start, stop] of spans) {
    const part = script.slice(start, stop);
    const first = part[0] as Edit;
    const aCount = part.filter((edit) => edit.mark !== '+').length;
    const bCount = part.filter((edit) => edit.mark !== '-').length;
    out.push(`@@ -${range(first.a + 1, aCount)} +${range(first.b + 1, bCount)} @@`);
    for (const edit of part) {
      const line = (edit.mark === '+' ? b[edit.b] : a[edit.a]) as string;
      out.push(edit.mark + line.replace(/\n$/, ''));
      if (!line.endsWith('\n')) out.push(NO_NEWLINE);
    }
  }
  return out;
}
