/**
 * "Did you mean …?": the known word closest to a mistyped one, if it is close enough to
 * be what was meant — one edit (a swap counts as one) from a short word, two from a word
 * of 5 or more. Commands, flags, nodes, groups, modules and berth.json's fields all ask
 * this one module, so they answer a typo alike.
 */
export function closest(typed: string, known: Iterable<string>): string | undefined {
  let best: { word: string; distance: number } | undefined;
  const lower = typed.toLowerCase();
  const words = [...known];
  for (const word of words) {
    const limit = word.length >= 5 ? 2 : 1;
    // A length apart by more than the limit cannot be close: skipped without the table.
    if (Math.abs(word.length - typed.length) > limit) continue;
    const distance = editDistance(lower, word.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { word, distance };
  }
  if (best) return best.word;
  // A word cut short (`conv`) means the one known word it begins, if only one does.
  if (typed.length < 3) return undefined;
  const begun = words.filter((word) => word.toLowerCase().startsWith(lower));
  return begun.length === 1 ? begun[0] : undefined;
}

/** The hint to end a refusal with: `; did you mean gitea?`, or nothing. */
export function didYouMean(typed: string, known: Iterable<string>): string {
  const meant = closest(typed, known);
  return meant === undefined ? '' : `; did you mean ${meant}?`;
}

/**
 * A refusal, a hint at what was meant if any, and what to do: `…; see berth help`, or
 * `…; did you mean status? See berth help`. `afterHint` is what to do once a hint is said.
 */
export function withHint(refusal: string, hint: string, then: string, afterHint = then): string {
  if (!hint) return `${refusal}; ${then}`;
  return `${refusal}${hint} ${afterHint[0]?.toUpperCase()}${afterHint.slice(1)}`;
}

/** Damerau-Levenshtein (optimal string alignment): `mdoe` is one swap from `mode`. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      }
      (rows[i] as number[])[j] = distance;
    }
  }
  return at(a.length, b.length);
}
