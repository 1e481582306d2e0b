/** A time as the pages show it, in UTC, to the second: "2026-11-26 14:02:09 UTC". */
export function timeOf(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** How long a survey took: "85 ms", "2.4 s". */
export function durationOf(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
