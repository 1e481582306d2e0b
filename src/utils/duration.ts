/** Durations as berth.json and a definition write them: `90s`, `15m`, `1h`, `1d`. */
const DURATION = /^(\d{1,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** A short, rounded-down age: `40s`, `12m`, `2h`, `3d`. */
export function describeAge(ms: number): string {
  const [count, unit] = ageIn(ms, Math.floor);
  return `${count}${unit}`;
}

/**
 * An age beyond a limit, rounded down unless that would read as within the limit
 * ("1s old; the flip allows 1s"): then rounded up, so it reads as what it is.
 */
export function describeAgeBeyond(ms: number, limit: number): string {
  const [count, unit, size] = ageIn(ms, Math.floor);
  if (count * size > limit) return `${count}${unit}`;
  const [up, upUnit] = ageIn(ms, Math.ceil);
  return `${up}${upUnit}`;
}

function ageIn(ms: number, round: (value: number) => number): [number, string, number] {
  const seconds = Math.max(0, round(ms / 1000));
  if (seconds < 120) return [seconds, 's', 1_000];
  const minutes = round(seconds / 60);
  if (minutes < 120) return [minutes, 'm', 60_000];
  const hours = round(minutes / 60);
  if (hours < 48) return [hours, 'h', 3_600_000];
  return [round(hours / 24), 'd', 86_400_000];
}

export function describeDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}
