import * as v from 'valibot';
import { KEY_KINDS, KEY_SECRET_KINDS } from '../keys/kinds.ts';
import { PackageMoveSchema } from './result.ts';

/**
 * The typed steps every plan is made of, take's and converge's alike, as schemas: the
 * planners make them, the engine carries them out, and the journal keeps the steps an act
 * did (its `told`), read back through these schemas. The types are theirs
 * (commands/steps/step.ts names them for the code that makes and runs steps).
 */

const KeySecretKindSchema = v.picklist(KEY_SECRET_KINDS);

/** Owner and group names the machine does not know yet, which the module's packages make. */
export const LaterOwnersSchema = v.object({
  user: v.optional(v.string()),
  group: v.optional(v.string()),
});

/**
 * The mode and owner a file is written with: what the definition names, else what the
 * file has (kept as it was), else for a new file the writer's own user and group (uid and
 * gid left out) and 0644 (0600 for a secret).
 */
export const AttributesSchema = v.object({
  mode: v.string(),
  uid: v.optional(v.number()),
  gid: v.optional(v.number()),
  /** Another user's owner and group a secret's file has now, not kept: the preview names them. */
  replaces: v.optional(v.object({ uid: v.number(), gid: v.number() })),
  /** An owner or group the module's packages make: looked up by name after they are installed. */
  later: v.optional(LaterOwnersSchema),
});

/** An owner, group or mode a path has that its definition does not want: drift. */
export const DriftSchema = v.object({
  what: v.picklist(['mode', 'owner', 'group']),
  was: v.string(),
  want: v.string(),
});

/** What a module's `check` said when it was run: exit 0 is running. */
export const CheckOutcomeSchema = v.object({
  code: v.number(),
  /** The last line it wrote, cleared of secrets. */
  last: v.string(),
  /**
   * It did not end within its deadline (this many milliseconds): berth stopped it and all
   * it started, and `code` is 124, as timeout(1) answers.
   */
  timedOut: v.optional(v.number()),
});

/**
 * A `tls` secret's certificate: the file it is written to (public: 0644 unless the file
 * is there with another mode), and what it is for. Its names are the definition's,
 * rendered with the node's values and facts.
 */
export const CertificateFileSchema = v.object({
  path: v.string(),
  names: v.array(v.string()),
  days: v.number(),
  attributes: AttributesSchema,
});

/** A key secret a step mints or places: its kind, and a `tls` secret's certificate. */
export const KeyOfSchema = v.object({
  kind: KeySecretKindSchema,
  certificate: v.optional(CertificateFileSchema),
});

/** Why a `tls` secret's certificate is renewed. */
export const RenewReasonSchema = v.variant('because', [
  /** In the last third of its life (or past it): it ends at `until`. */
  v.object({ because: v.literal('due'), until: v.string() }),
  /** It is not for the names the definition gives now. */
  v.object({ because: v.literal('names'), was: v.array(v.string()) }),
]);

/** Why a file is written, as a value: the preview says it in words. */
export const WriteReasonSchema = v.variant('because', [
  v.object({ because: v.literal('install') }),
  v.object({ because: v.literal('missing') }),
  /** `reading`: the values and facts the lines that differ read (`value workers`). */
  v.object({
    because: v.literal('differs'),
    diff: v.array(v.string()),
    reading: v.optional(v.array(v.string())),
  }),
  v.object({ because: v.literal('drift'), drift: v.array(DriftSchema) }),
  v.object({ because: v.literal('carries-minted-secret') }),
]);

const attributes = AttributesSchema.entries;
const timeout = v.optional(v.number());

/** One thing an act does to a machine or to berth's own records. */
export const StepSchema = v.variant('do', [
  v.object({
    do: v.literal('mkdir'),
    module: v.string(),
    path: v.string(),
    /** What the definition names (and only that): a directory keeps what it is not told. */
    mode: v.optional(v.string()),
    uid: v.optional(v.number()),
    gid: v.optional(v.number()),
    later: v.optional(LaterOwnersSchema),
    /** The directory is there; its owner, group or mode is mended. */
    drift: v.optional(v.array(DriftSchema)),
  }),
  v.object({
    do: v.literal('mint'),
    module: v.string(),
    secret: v.string(),
    path: v.string(),
    bytes: v.number(),
    /** A secret inside a file: minted into the vault only; the file's write places it. */
    inside: v.optional(v.literal(true)),
    /** A key of this kind rather than random bytes (and a `tls` secret's certificate). */
    key: v.optional(KeyOfSchema),
    ...attributes,
  }),
  v.object({
    do: v.literal('restore'),
    module: v.string(),
    secret: v.string(),
    path: v.string(),
    drift: v.optional(v.array(DriftSchema)),
    /** A secret inside a file: kept in the vault, placed by the file's next write. */
    inside: v.optional(v.literal(true)),
    /** A `tls` secret: its certificate restored too. */
    certificate: v.optional(CertificateFileSchema),
    ...attributes,
  }),
  v.object({
    do: v.literal('keep'),
    module: v.string(),
    secret: v.string(),
    path: v.string(),
    match: v.optional(v.string()),
    /** The fingerprint a plan saw: a value that no longer has it is not kept. */
    fingerprint: v.optional(v.string()),
    /** A key of this kind, found: read back as one, or the step fails. */
    kind: v.optional(KeySecretKindSchema),
    /** A `tls` secret's certificate, kept with its key, and the fingerprint a plan saw of it. */
    certificate: v.optional(v.object({ path: v.string(), fingerprint: v.optional(v.string()) })),
  }),
  /**
   * A key replaced by the one its preview minted and named (`kid`), kept sealed in the
   * vault as rotating until this act: never one minted now. `was`: the kid it replaces.
   */
  v.object({
    do: v.literal('rotate'),
    module: v.string(),
    secret: v.string(),
    path: v.string(),
    kind: KeySecretKindSchema,
    keyKind: v.picklist(KEY_KINDS),
    kid: v.string(),
    was: v.optional(v.string()),
    certificate: v.optional(CertificateFileSchema),
    ...attributes,
  }),
  /** A `tls` secret's key and certificate made anew, signed by the state's CA. */
  v.object({
    do: v.literal('renew'),
    module: v.string(),
    secret: v.string(),
    path: v.string(),
    why: RenewReasonSchema,
    certificate: CertificateFileSchema,
    ...attributes,
  }),
  v.object({
    do: v.literal('write'),
    module: v.string(),
    path: v.string(),
    why: WriteReasonSchema,
    ...attributes,
  }),
  /**
   * A package installed at exactly `version` (upgraded or downgraded from `from`), with
   * what the package manager installs beside it; no service starts meanwhile while
   * `holdStarts` (the module's own start starts it, once its files are written).
   */
  v.object({
    do: v.literal('package'),
    module: v.string(),
    package: v.string(),
    /**
     * Exactly; none only for an unpinned package planned before a refresh of the lists.
     * Removed or purged, the version that was installed.
     */
    version: v.optional(v.string()),
    how: v.picklist(['install', 'upgrade', 'downgrade', 'remove', 'purge']),
    from: v.optional(v.string()),
    /** What the package manager installs beside this module's packages (on its last one). */
    with: v.optional(v.array(PackageMoveSchema)),
    /** The module's packages `with` is of, when they are several (on its last one). */
    withFor: v.optional(v.array(v.string())),
    /**
     * Planned on lists the act refreshes first: it is planned again on what they offer
     * then, and installs that (its pin, or their candidate), said as it goes.
     */
    afterRefresh: v.optional(v.literal(true)),
    /** Owners the module names that its packages make (on its last one): looked up once they are. */
    lookUp: v.optional(v.object({ users: v.array(v.string()), groups: v.array(v.string()) })),
    holdStarts: v.boolean(),
  }),
  /**
   * berth's hold on service starts that an install killed half-way left on the node (its
   * policy-rc.d) lifted, before anything else of the node's packages; `kept`: the node's
   * own is put back.
   */
  v.object({ do: v.literal('unhold'), module: v.string(), kept: v.boolean() }),
  /**
   * The node's package lists refreshed (apt-get update) before the act installs: they are
   * `age` seconds old (none: never fetched), and `limit` (refresh_after) is the most they
   * may be, a module's (`by`) or berth.json's.
   */
  v.object({
    do: v.literal('refresh'),
    module: v.string(),
    age: v.optional(v.number()),
    limit: v.string(),
    by: v.optional(v.string()),
  }),
  /**
   * The module's setup, after its files and before its start or reload; `pending`: owed
   * by an act that began it, or was cut before it, and did not see it succeed.
   */
  v.object({
    do: v.literal('setup'),
    module: v.string(),
    script: v.string(),
    pending: v.optional(v.literal(true)),
    timeout,
  }),
  /** `timeout`: the definition's, in milliseconds, when it names one. */
  v.object({
    do: v.literal('start'),
    module: v.string(),
    script: v.string(),
    check: v.optional(CheckOutcomeSchema),
    timeout,
  }),
  /** After writes to a module berth runs; without `script`, there is none to run. */
  v.object({
    do: v.literal('reload'),
    module: v.string(),
    script: v.optional(v.string()),
    pending: v.optional(v.literal(true)),
    timeout,
  }),
  v.object({ do: v.literal('stop'), module: v.string(), script: v.string(), timeout }),
  /**
   * Records that berth manages the module; a take also records that the node is to run it,
   * and the module's packages it found installed (`packages`, by name: version).
   */
  v.object({
    do: v.literal('manage'),
    module: v.string(),
    started: v.boolean(),
    via: v.optional(v.literal('take')),
    packages: v.optional(v.record(v.string(), v.string())),
  }),
  /** `packages`: those the module names, which release leaves installed. */
  v.object({
    do: v.literal('release'),
    module: v.string(),
    packages: v.optional(v.array(v.string())),
  }),
]);

/** A hook's words once it ran: its own, and its last lines, cleared of secrets. */
export const HookDoneSchema = v.object({
  hook: v.picklist(['setup', 'start', 'stop', 'reload']),
  module: v.string(),
  /** The hook's last lines (at most hook.ts's HOOK_LINES_KEPT): said, so the journal, keeps them. */
  tail: v.array(v.string()),
});

/**
 * Whose words a step is said in once done: a take says its secrets one by one
 * ("secret db: read into the vault from …"), a converge says what it did.
 */
export const VoiceSchema = v.picklist(['take', 'converge']);

/** A step done, as the engine tells it: the step, and a hook's outcome when it ran one. */
export const ToldSchema = v.object({
  step: StepSchema,
  voice: VoiceSchema,
  hook: v.optional(HookDoneSchema),
});
