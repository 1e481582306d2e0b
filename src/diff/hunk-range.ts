// Apart from diff.ts, so that what shows a diff (diff-shown.ts, loaded by `berth status`'s
// words) does not load jsdiff, which only making one needs.

/**
 * A hunk's range as GNU writes it: the count left out when it is 1, and an empty side
 * named by the line before it (`-0,0` for an empty file).
 */
export function range(start: number, count: number): string {
  if (count === 1) return `${start}`;
  return `${count === 0 ? start - 1 : start},${count}`;
}
