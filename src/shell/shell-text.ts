import { readFileSync } from 'node:fs';

// The fixed sh berth ships to a machine, from the `.sh` files of src/machines/ and
// src/packages/ (linted by shellcheck). Run from source (tsx), they are read here; the
// bundle carries them as text instead: scripts/build.mjs puts a module of their texts in
// this one's place.

/** The text of `name`, a `.sh` file named from src/: `machines/walk.sh`. */
export function shellText(name: string): string {
  return readFileSync(new URL(`../${name}`, import.meta.url), 'utf8');
}
