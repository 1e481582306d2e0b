import * as v from 'valibot';
import { RefreshAfter } from '../packages/packages-field.ts';
import { parseDuration } from '../utils/duration.ts';
import { jsonRecord, strictJsonObject } from '../utils/strict-json.ts';
import { isAgeRecipient } from '../vault/recipient.ts';
import { isName } from './names.ts';
import { checkStoreUrl } from './store-url.ts';
import {
  ALL,
  groupsProblem,
  resolveTarget,
  targetRefusalWords,
  targetSyntaxProblem,
} from './targets.ts';
import { GivenValuesSchema, valuesProblem } from './values.ts';

/**
 * A node is reached one way: `root`, or `ssh` (with its `port` and `sudo`). One strict
 * object rather than a union of shapes, so that a mistyped field is said as such
 * ("unknown field nodes.box.rot; did you mean root?"), not as a value that matches
 * neither shape.
 */
const NodeEntrySchema = v.pipe(
  strictJsonObject({
    root: v.optional(v.pipe(v.string(), v.startsWith('/', 'a root is an absolute path'))),
    ssh: v.optional(v.pipe(v.string(), v.minLength(1, 'a destination, like "admin@web1.lan"'))),
    port: v.optional(
      v.pipe(
        v.number(),
        v.integer('port is a whole number'),
        v.minValue(1, 'port is from 1 to 65535'),
        v.maxValue(65_535, 'port is from 1 to 65535'),
      ),
    ),
    sudo: v.optional(v.boolean()),
  }),
  v.check(
    (entry) => (entry.root === undefined) !== (entry.ssh === undefined),
    'a node has root (a directory on this machine) or ssh (a destination), one of the two',
  ),
  v.check(
    (entry) => entry.root === undefined || (entry.port === undefined && entry.sudo === undefined),
    'port and sudo go with ssh; a node with root is this machine',
  ),
  v.transform((entry): { root: string } | { ssh: string; port?: number; sudo?: boolean } =>
    entry.root !== undefined
      ? { root: entry.root }
      : {
          ssh: entry.ssh ?? '',
          ...(entry.port === undefined ? {} : { port: entry.port }),
          ...(entry.sudo === undefined ? {} : { sudo: entry.sudo }),
        },
  ),
);
export type NodeEntry = v.InferOutput<typeof NodeEntrySchema>;

const NAME_RULE = '1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit';

/** A group's member: a node, or another group as `@name`. */
const GroupMemberSchema = v.pipe(
  v.string(),
  v.check(
    (member) => isName(member.startsWith('@') ? member.slice(1) : member),
    `a member is a node or @group, its name ${NAME_RULE}`,
  ),
);

/** The five commands of the API, as a grant names them; `*` is all of them. */
export const GRANTABLE = ['assign', 'unassign', 'take', 'converge', 'adopt', '*'] as const;

/** Who may do what over the API: a token's subject, the commands, and on which target. */
const GrantSchema = strictJsonObject({
  sub: v.pipe(v.string(), v.minLength(1, 'the subject of a token, as its sub claim says it')),
  may: v.pipe(
    v.array(v.picklist(GRANTABLE)),
    v.minLength(1, 'at least one command, or "*" for all of them'),
  ),
  on: v.pipe(
    v.string(),
    v.check(
      (target) => targetSyntaxProblem(target) === undefined,
      (issue) => targetSyntaxProblem(String(issue.input)) ?? 'a target',
    ),
  ),
});
export type Grant = v.InferOutput<typeof GrantSchema>;

/** `berth.json`: the inventory, where the catalog is, the flip window, the store, the values. Strict, like a definition. */
export const SettingsSchema = strictJsonObject({
  nodes: v.optional(
    v.pipe(
      jsonRecord(v.string(), NodeEntrySchema),
      v.check((nodes) => Object.keys(nodes).every(isName), `node names are ${NAME_RULE}`),
    ),
    { local: { root: '/' } },
  ),
  /** Named sets of nodes, for targets (`@web`); checked against the inventory by `settingsProblem`. */
  groups: v.optional(
    v.pipe(
      jsonRecord(v.string(), v.array(GroupMemberSchema)),
      v.check((groups) => Object.keys(groups).every(isName), `group names are ${NAME_RULE}`),
      v.check((groups) => !Object.hasOwn(groups, ALL), '@all is every node: no group is named all'),
    ),
    {},
  ),
  /**
   * Declared desired state: by target, the modules its nodes are to run, beside what
   * `assign` keeps (a node runs the union), so that a team reviews it in a pull request.
   */
  run: v.optional(
    v.pipe(
      jsonRecord(
        v.string(),
        v.array(v.pipe(v.string(), v.check(isName, `a module name is ${NAME_RULE}`))),
      ),
      v.check(
        (run) => Object.keys(run).every((target) => targetSyntaxProblem(target) === undefined),
        (issue) =>
          Object.keys(issue.input as object)
            .map((target) => targetSyntaxProblem(target))
            .find((problem) => problem !== undefined) ?? 'a target',
      ),
    ),
    {},
  ),
  /**
   * What differs from node to node, by `@all`, `@group` and node: the values modules
   * declare and read (values.ts). A node's own wins, then its groups', then `@all`'s.
   */
  values: v.optional(GivenValuesSchema, {}),
  /** Who may do what over the API; without it, every authenticated subject may do everything. */
  grants: v.optional(v.array(GrantSchema)),
  catalog: v.optional(v.pipe(v.string(), v.minLength(1, 'a directory, like "modules"')), 'modules'),
  flip: v.optional(
    v.pipe(
      v.string(),
      v.check((text) => parseDuration(text) !== undefined, 'a duration, like "90s", "15m" or "1h"'),
    ),
    '15m',
  ),
  /**
   * The PostgreSQL store a team shares, `postgresql://USER@HOST[:PORT]/DATABASE`; the
   * state directory's own files when left out. `$BERTH_STORE` wins over it. Never with
   * a password, and never said back: the refusal names what is wrong, not the URL.
   */
  store: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (url) => checkStoreUrl(url) === undefined,
        (issue) => checkStoreUrl(String(issue.input)) ?? 'not a store URL',
      ),
    ),
  ),
  /** How old a node's package lists may be before an act that installs refreshes them first. */
  refresh_after: v.optional(RefreshAfter),
  /**
   * An ssh config file for the ssh nodes (`ssh -F`), relative to the state directory: a
   * team keeps its fleet's Host entries beside berth.json. Without it, ssh reads the
   * operator's ~/.ssh/config as usual.
   */
  sshConfig: v.optional(
    v.pipe(v.string(), v.minLength(1, 'a file, like "ssh_config", relative to berth.json')),
  ),
  /**
   * The age recipients every kept secret is sealed to: each operator's and each berth
   * api's public key. Without them, values are sealed to berth's own identity.
   */
  recipients: v.optional(
    v.array(
      v.pipe(
        v.string(),
        v.regex(/^age1[02-9ac-hj-np-z]{58}$/, 'an age X25519 recipient, like "age1ql3z7hjy…"'),
        // bech32's checksum finds a mistyped character here, not at the first value sealed.
        v.check(
          isAgeRecipient,
          'an age X25519 recipient whose checksum holds (a character of this one is mistyped)',
        ),
      ),
    ),
  ),
});
export type Settings = v.InferOutput<typeof SettingsSchema>;

/**
 * What berth.json's schema cannot say alone, on the whole inventory: a group member that
 * is neither a node nor a group, a cycle of groups, a grant on a node or group berth.json
 * does not name, values for either, or two groups of a node whose values disagree.
 * Checked where berth.json is read whole, never on a part of it.
 */
export function settingsProblem(settings: Settings): string | undefined {
  const nodes = Object.keys(settings.nodes);
  const groups = groupsProblem(settings.groups, nodes);
  if (groups) return groups;
  for (const target of Object.keys(settings.run)) {
    const targeted = resolveTarget(target, { nodes, groups: settings.groups });
    if (!targeted.ok) return `run.${target}: ${targetRefusalWords(targeted.refusal)}`;
  }
  for (const [index, grant] of (settings.grants ?? []).entries()) {
    const targeted = resolveTarget(grant.on, { nodes, groups: settings.groups });
    if (!targeted.ok) return `grants.${index}.on: ${targetRefusalWords(targeted.refusal)}`;
  }
  return valuesProblem(settings.values, nodes, settings.groups);
}

export function defaultSettings(): Settings {
  return v.parse(SettingsSchema, {});
}

export function flipMs(settings: Settings): number {
  return parseDuration(settings.flip) ?? 15 * 60_000;
}
