/** A time as the pages show it, in UTC, to the second: "2026-11-26 14:02:09 UTC". */
export function timeOf(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** How long a survey took: "85 ms", "2.4 s". */
export function durationOf(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** How long ago, in words: "40 seconds ago", "12 minutes ago", "3 hours ago", "2 days ago". */
export function ageOf(at: Date, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - at.getTime()) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const [count, unit] =
    seconds < 120
      ? [seconds, 'second']
      : minutes < 120
        ? [minutes, 'minute']
        : hours < 48
          ? [hours, 'hour']
          : [Math.floor(hours / 24), 'day'];
  return `${count} ${unit}${count === 1 ? '' : 's'} ago`;
}
