/**
 * Debian's order of versions (`dpkg --compare-versions`): epoch, then the upstream version,
 * then the revision, each compared as runs of non-digits (letters before other characters,
 * `~` before anything, even the end) and runs of digits, as numbers. Negative when `a`
 * comes before `b`.
 */
export function compareVersions(a: string, b: string): number {
  const [epochA, upstreamA, revisionA] = parts(a);
  const [epochB, upstreamB, revisionB] = parts(b);
  if (epochA !== epochB) return epochA - epochB;
  return comparePart(upstreamA, upstreamB) || comparePart(revisionA, revisionB);
}

function parts(version: string): [number, string, string] {
  const colon = version.indexOf(':');
  const epoch = colon === -1 ? 0 : Number(version.slice(0, colon));
  const rest = colon === -1 ? version : version.slice(colon + 1);
  const dash = rest.lastIndexOf('-');
  return dash === -1 ? [epoch, rest, '0'] : [epoch, rest.slice(0, dash), rest.slice(dash + 1)];
}

/** A character's weight in a non-digit run: `~` first, then the end, letters, the rest. */
function weight(char: string | undefined): number {
  if (char === undefined) return 0;
  if (char === '~') return -1;
  if (/[A-Za-z]/.test(char)) return char.charCodeAt(0);
  return char.charCodeAt(0) + 256;
}

function comparePart(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    while (
      (i < a.length && !/\d/.test(a[i] as string)) ||
      (j < b.length && !/\d/.test(b[j] as string))
    ) {
      const charA = i < a.length && !/\d/.test(a[i] as string) ? a[i] : undefined;
      const charB = j < b.length && !/\d/.test(b[j] as string) ? b[j] : undefined;
      const difference = weight(charA) - weight(charB);
      if (difference !== 0) return difference;
      i++;
      j++;
    }
    let numberA = '';
    let numberB = '';
    while (i < a.length && /\d/.test(a[i] as string)) numberA += a[i++];
    while (j < b.length && /\d/.test(b[j] as string)) numberB += b[j++];
    const difference = Number(numberA || '0') - Number(numberB || '0');
    if (difference !== 0) return difference;
  }
  return 0;
}
