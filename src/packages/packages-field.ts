import * as v from 'valibot';
import { strictJsonObject } from '../strict-json.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from './debian-grammar.ts';

const PACKAGE = 'a package is a Debian package name, like "nginx" (a-z, 0-9, +, . and -)';
const VERSION = 'a version is as the package manager spells it, like "1.22.1-9+deb12u1"';

/**
 * A package the module's node must have: a name (whatever version the node's lists
 * offer, and any version already installed), or a name and the exact version. Always an
 * object once parsed; a name alone is made the object first, so a wrong field gets the
 * strict object's words.
 */
const PackageSpec = v.pipe(
  v.unknown(),
  v.check((spec) => typeof spec !== 'string' || PACKAGE_NAME.test(spec), PACKAGE),
  v.transform((spec) => (typeof spec === 'string' ? { name: spec } : spec)),
  strictJsonObject({
    name: v.pipe(v.string(), v.regex(PACKAGE_NAME, PACKAGE)),
    version: v.optional(v.pipe(v.string(), v.regex(PACKAGE_VERSION, VERSION))),
  }),
);

/** A definition's `packages`: each package named once. */
export const PackagesField = v.pipe(
  v.array(PackageSpec),
  v.check(
    (specs) => new Set(specs.map((spec) => spec.name)).size === specs.length,
    'a package is named once in packages',
  ),
);
