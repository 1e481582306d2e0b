/**
 * Debian's grammar of what a node's package manager says: a package's name, a version, an
 * archive's SHA256. Every one read from a node is checked against it before berth uses it
 * anywhere (apt.ts): what fails is a blocker in words, never text in a script.
 */

/**
 * A package's name (Debian Policy 5.6.7): two or more of a-z, 0-9, `+`, `-`, `.`, from a
 * letter or digit; never ending in `-`, which apt reads as a removal.
 */
export const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]*[a-z0-9+.]$/;

/**
 * A version (Debian Policy 5.6.12): `[epoch:]upstream[-revision]`, the epoch digits, the
 * upstream from a digit, of letters, digits and `.+~-`, the revision (after the last `-`)
 * of letters, digits and `.+~`, not empty.
 */
export const PACKAGE_VERSION =
  /^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~]*(?:-[A-Za-z0-9.+~-]*[A-Za-z0-9.+~])?$/;

/** An archive's SHA256, as apt's lists give it: 64 lowercase hex digits. */
export const ARCHIVE_SHA256 = /^[0-9a-f]{64}$/;

/** A package's name as apt may print it: with its architecture (`libc6:amd64`). */
const ARCHITECTURE = /^[a-z0-9][a-z0-9-]*$/;

export function isPackageName(text: string, withArchitecture = false): boolean {
  const colon = text.indexOf(':');
  if (!withArchitecture || colon === -1) return PACKAGE_NAME.test(text);
  return PACKAGE_NAME.test(text.slice(0, colon)) && ARCHITECTURE.test(text.slice(colon + 1));
}

export function isPackageVersion(text: string): boolean {
  return PACKAGE_VERSION.test(text);
}

/**
 * A value that failed the grammar, as words may show it: quoted, every character outside
 * printable ASCII escaped (a terminal never reads one as its own), and cut short.
 */
export function shownValue(text: string): string {
  const cut = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return `"${cut.replace(/[^ -~]|["\\]/g, (char) => (char === '"' || char === '\\' ? `\\${char}` : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}
