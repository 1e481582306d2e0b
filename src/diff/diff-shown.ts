/**
 * What a preview shows of a file's unified diff: the changed settings first, each part
 * of the diff that changes only comments or blank lines folded to one line, each file's
 * lines added and removed counted, and at most about 40 lines unless the whole is asked
 * for (`--full-diff`). A 2,277-line redis.conf whose admin set `maxmemory` differs from
 * berth's comment-free one mostly in comments: the `maxmemory` lines are what to see.
 */
import { range } from './hunk-range.ts';

/**
 * In place of a file's diff in a node's preview: words that it is shown once elsewhere,
 * or undefined to show it there.
 */
export type DiffShownOnce = (path: string, diff: readonly string[]) => string | undefined;

/** The most lines a preview shows of one file's diff, unless the whole is asked for. */
export const DIFF_LINES = 40;
/** Lines of context around a change, as `diff -u`. */
const CONTEXT = 3;

/** A comment or a blank line in the configuration languages berth writes. */
const QUIET = /^\s*(?:#|;|\/\/|$)/;

/** One line of a hunk's body, with the line numbers it starts at on each side. */
interface BodyLine {
  text: string;
  old: number;
  new: number;
}

/**
 * What a preview shows of `diff`, a file's diff as `unifiedDiff` made it: with `full`,
 * all of it; else folded and cut. Either way its third line counts what changes.
 */
export function shownDiff(diff: readonly string[], full: boolean): string[] {
  if (diff.length < 2) return [...diff];
  const head = diff.slice(0, 2);
  const body = bodyOf(diff.slice(2));
  const changed = body.filter(isChange);
  if (changed.length === 0) return [...diff];
  const added = changed.filter((line) => line.text.startsWith('+')).length;
  const quiet = changed.filter((line) => QUIET.test(line.text.slice(1))).length;
  const count = `(+${added} −${changed.length - added} lines${
    quiet > 0 ? `: ${quiet} of them comments or blank` : ''
  })`;
  if (full) return [...head, count, ...diff.slice(2)];
  const shown = [...head, count, ...folded(body)];
  if (shown.length <= DIFF_LINES) return shown;
  return [
    ...shown.slice(0, DIFF_LINES),
    `… ${shown.length - DIFF_LINES} more lines of diff (--full-diff shows them all)`,
  ];
}

function isContext(line: BodyLine | undefined): boolean {
  return line?.text.startsWith(' ') ?? false;
}

function isChange(line: BodyLine): boolean {
  return line.text.startsWith('+') || line.text.startsWith('-');
}

/** The hunks' lines, one list, numbered from their `@@` lines; other lines are kept as they are. */
function bodyOf(lines: readonly string[]): BodyLine[] {
  const body: BodyLine[] = [];
  let old = 0;
  let now = 0;
  for (const text of lines) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (header) {
      // An empty side is named by the line before it.
      old = Number(header[1]) + (header[2] === '0' ? 1 : 0);
      now = Number(header[3]) + (header[4] === '0' ? 1 : 0);
      body.push({ text, old, new: now });
      continue;
    }
    body.push({ text, old, new: now });
    if (text.startsWith(' ') || text.startsWith('-')) old++;
    if (text.startsWith(' ') || text.startsWith('+')) now++;
  }
  return body;
}

/**
 * The hunks again, made around the changes that are not comments or blank lines and
 * shown whole, then each stretch that changes only comments or blank lines as one line.
 */
function folded(body: readonly BodyLine[]): string[] {
  const hunks = hunkBounds(body);
  // Windows of context around each change that is not a comment or blank line, merged
  // when they touch, never across a hunk's edge (past it the lines are not there).
  const windows: [number, number][] = [];
  body.forEach((line, index) => {
    if (!isChange(line) || quietLine(line)) return;
    // Context is unchanged lines only: a comment removed beside a setting is folded
    // with the rest, not shown as the setting's context.
    const [first, last] = hunks[index] as [number, number];
    let start = index;
    while (start > first && index - start < CONTEXT && isContext(body[start - 1])) start--;
    let end = index;
    if (body[end + 1]?.text.startsWith('\\')) end++;
    for (let more = CONTEXT; more > 0 && end < last && isContext(body[end + 1]); more--) end++;
    if (body[end + 1]?.text.startsWith('\\')) end++;
    const previous = windows.at(-1);
    if (previous && start <= previous[1] + 1 && hunks[previous[0]]?.[0] === first)
      previous[1] = Math.max(previous[1], end);
    else windows.push([start, end]);
  });
  const inWindow = new Uint8Array(body.length);
  const shown: string[] = [];
  for (const [start, end] of windows) {
    inWindow.fill(1, start, end + 1);
    const lines = body.slice(start, end + 1);
    shown.push(headerOf(lines), ...lines.map((line) => line.text));
  }
  // What is left changes only comments and blank lines: one line a stretch between the
  // windows and the hunks' edges, from its first change to its last.
  const stretches: BodyLine[][] = [];
  let stretch: BodyLine[] = [];
  body.forEach((line, index) => {
    if (line.text.startsWith('@@') || inWindow[index]) {
      if (stretch.length > 0) stretches.push(stretch);
      stretch = [];
    } else if (isChange(line) || stretch.length > 0) stretch.push(line);
  });
  if (stretch.length > 0) stretches.push(stretch);
  for (const lines of stretches) {
    while (lines.length > 0 && !isChange(lines.at(-1) as BodyLine)) lines.pop();
    const added = lines.filter((line) => line.text.startsWith('+')).length;
    const removed = lines.filter((line) => line.text.startsWith('-')).length;
    shown.push(`${headerOf(lines)} only comments or blank lines: +${added} −${removed}`);
  }
  return shown;
}

function quietLine(line: BodyLine): boolean {
  return QUIET.test(line.text.slice(1));
}

/** For each body line, the first and last index of its hunk, the `@@` line left out. */
function hunkBounds(body: readonly BodyLine[]): [number, number][] {
  const bounds: [number, number][] = [];
  let first = 0;
  body.forEach((line, index) => {
    if (!line.text.startsWith('@@')) return;
    for (let at = first; at < index; at++) bounds[at] = [first, index - 1];
    bounds[index] = [index + 1, index];
    first = index + 1;
  });
  for (let at = first; at < body.length; at++) bounds[at] = [first, body.length - 1];
  return bounds;
}

/** The `@@` line of a run of body lines, as GNU writes one. */
function headerOf(lines: readonly BodyLine[]): string {
  const first = lines[0] as BodyLine;
  const old = lines.filter((line) => line.text.startsWith(' ') || line.text.startsWith('-'));
  const now = lines.filter((line) => line.text.startsWith(' ') || line.text.startsWith('+'));
  return `@@ -${range(first.old, old.length)} +${range(first.new, now.length)} @@`;
}
