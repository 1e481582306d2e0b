import { readFileSync } from 'node:fs';

// The completion scripts `berth completion` prints, from the files in completion/ beside
// this one (the bash one linted by shellcheck, each checked by its shell: see
// tests/commands/completion.test.ts). Run from source (tsx), they are read here; the bundle
// carries them as text instead: scripts/build.mjs puts a module of their texts in this
// one's place.

/** The text of `name`, a file in src/cli/completion/ (`berth.bash`). */
export function completionText(name: string): string {
  return readFileSync(new URL(`completion/${name}`, import.meta.url), 'utf8');
}
