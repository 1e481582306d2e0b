/** A time as the pages show it, in UTC, to the second: "2026-11-26 14:02:09 UTC". */
export function timeOf(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
