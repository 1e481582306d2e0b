import * as v from 'valibot';
import { parseDuration } from '../utils/duration.ts';
import { strictJsonObject } from '../utils/strict-json.ts';
import { PACKAGE_NAME, PACKAGE_VERSION } from './debian-grammar.ts';

const PACKAGE = 'a package is a Debian package name, like "nginx" (a-z, 0-9, +, . and -)';
const VERSION = 'a version is as the package manager spells it, like "1.22.1-9+deb12u1"';

/**
 * A package the module's node must have: a name (whatever version the node's lists
 * offer, and any version already installed), or a name and the exact version; or one it
 * must not have (`"state": "absent"`: removed, its configuration kept unless `purge`).
 * Always an object once parsed; a name alone is made the object first, so a wrong field
 * gets the strict object's words.
 */
const PackageSpec = v.pipe(
  v.unknown(),
  v.check((spec) => typeof spec !== 'string' || PACKAGE_NAME.test(spec), PACKAGE),
  v.transform((spec) => (typeof spec === 'string' ? { name: spec } : spec)),
  strictJsonObject({
    name: v.pipe(v.string(), v.regex(PACKAGE_NAME, PACKAGE)),
    version: v.optional(v.pipe(v.string(), v.regex(PACKAGE_VERSION, VERSION))),
    state: v.optional(
      v.picklist(['present', 'absent'], 'state is "present" (the default) or "absent"'),
    ),
    purge: v.optional(v.boolean('purge is true or false')),
  }),
  v.check(
    (spec) => spec.state !== 'absent' || spec.version === undefined,
    'a package absent has no version: berth removes whatever version is installed',
  ),
  v.check(
    (spec) => spec.purge === undefined || spec.state === 'absent',
    'purge is for a package absent ("state": "absent"): its configuration is removed too',
  ),
);

/** A definition's `packages`: each package named once. */
export const PackagesField = v.pipe(
  v.array(PackageSpec),
  v.check(
    (specs) => new Set(specs.map((spec) => spec.name)).size === specs.length,
    'a package is named once in packages',
  ),
);

/**
 * `refresh_after` (a definition's, or berth.json's): how old a node's package lists may be
 * before an act that installs refreshes them first, as a duration.
 */
export const RefreshAfter = v.pipe(
  v.string(),
  v.check(
    (text) => parseDuration(text) !== undefined,
    'how old the package lists may be, a duration like "12h" or "1d"',
  ),
);
