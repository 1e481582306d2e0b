import { readFileSync } from 'node:fs';

// The fixed sh the ssh machine ships, from the `.sh` files beside this one (linted by
// shellcheck). Run from source (tsx), they are read here; the bundle carries them as text
// instead: scripts/build.mjs puts a module of their texts in this one's place.

/** The text of `name`, a `.sh` file in src/machines/. */
export function shellText(name: string): string {
  return readFileSync(new URL(name, import.meta.url), 'utf8');
}
