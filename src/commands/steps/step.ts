import type { KeyKind, KeySecretKind } from '../../keys/kinds.ts';
import type { PackageMove } from '../../packages/packages.ts';

/**
 * The typed steps every plan is made of, take's and converge's alike: the planners make
 * them, the engine (engine.ts) carries them out, words.ts says them, report.ts lists them.
 */

/**
 * The mode and owner a file is written with: what the definition names, else what the
 * file has (kept as it was), else for a new file the writer's own user and group (uid and
 * gid left out) and 0644 (0600 for a secret).
 */
export interface Attributes {
  mode: string;
  uid?: number;
  gid?: number;
  /** Another user's owner and group a secret's file has now, not kept: the preview names them. */
  replaces?: { uid: number; gid: number };
  /** An owner or group the module's packages make: looked up by name after they are installed. */
  later?: LaterOwners;
}

/** Owner and group names the machine does not know yet, which the module's packages make. */
export interface LaterOwners {
  user?: string;
  group?: string;
}

/** An owner, group or mode a path has that its definition does not want: drift. */
export interface Drift {
  what: 'mode' | 'owner' | 'group';
  was: string;
  want: string;
}

/** What a module's `check` said when it was run: exit 0 is running. */
export interface CheckOutcome {
  code: number;
  /** The last line it wrote, cleared of secrets. */
  last: string;
  /**
   * It did not end within its deadline (this many milliseconds): berth stopped it and all
   * it started, and `code` is 124, as timeout(1) answers.
   */
  timedOut?: number;
}

/** A check as a digest covers it: its exit status, not its words (see `checkCovered`). */
export type CoveredCheck = Pick<CheckOutcome, 'code'>;

/**
 * A `tls` secret's certificate: the file it is written to (public: 0644 unless the file
 * is there with another mode), and what it is for. Its names are the definition's,
 * rendered with the node's values and facts.
 */
export interface CertificateFile {
  path: string;
  names: string[];
  days: number;
  attributes: Attributes;
}

/** A key secret a step mints or places: its kind, and a `tls` secret's certificate. */
export interface KeyOf {
  kind: KeySecretKind;
  certificate?: CertificateFile;
}

/** Why a `tls` secret's certificate is renewed. */
export type RenewReason =
  /** In the last third of its life (or past it): it ends at `until`. */
  | { because: 'due'; until: string }
  /** It is not for the names the definition gives now. */
  | { because: 'names'; was: string[] };

/** One thing an act does to a machine or to berth's own records. */
export type Step =
  | {
      do: 'mkdir';
      module: string;
      path: string;
      /** What the definition names (and only that): a directory keeps what it is not told. */
      mode?: string;
      uid?: number;
      gid?: number;
      later?: LaterOwners;
      /** The directory is there; its owner, group or mode is mended. */
      drift?: Drift[];
    }
  | ({
      do: 'mint';
      module: string;
      secret: string;
      path: string;
      bytes: number;
      /** A secret inside a file: minted into the vault only; the file's write places it. */
      inside?: true;
      /** A key of this kind rather than random bytes (and a `tls` secret's certificate). */
      key?: KeyOf;
    } & Attributes)
  | ({
      do: 'restore';
      module: string;
      secret: string;
      path: string;
      drift?: Drift[];
      /** A secret inside a file: kept in the vault, placed by the file's next write. */
      inside?: true;
      /** A `tls` secret: its certificate restored too. */
      certificate?: CertificateFile;
    } & Attributes)
  | {
      do: 'keep';
      module: string;
      secret: string;
      path: string;
      match?: string;
      /** The fingerprint a plan saw: a value that no longer has it is not kept. */
      fingerprint?: string;
      /** A key of this kind, found: read back as one, or the step fails. */
      kind?: KeySecretKind;
      /** A `tls` secret's certificate, kept with its key, and the fingerprint a plan saw of it. */
      certificate?: { path: string; fingerprint?: string };
    }
  /**
   * A key replaced by the one its preview minted and named (`kid`), kept sealed in the
   * vault as rotating until this act: never one minted now. `was`: the kid it replaces.
   */
  | ({
      do: 'rotate';
      module: string;
      secret: string;
      path: string;
      kind: KeySecretKind;
      keyKind: KeyKind;
      kid: string;
      was?: string;
      certificate?: CertificateFile;
    } & Attributes)
  /** A `tls` secret's key and certificate made anew, signed by the state's CA. */
  | ({
      do: 'renew';
      module: string;
      secret: string;
      path: string;
      why: RenewReason;
      certificate: CertificateFile;
    } & Attributes)
  | ({ do: 'write'; module: string; path: string; why: WriteReason } & Attributes)
  /**
   * A package installed at exactly `version` (upgraded or downgraded from `from`), with
   * what the package manager installs beside it; no service starts meanwhile while
   * `holdStarts` (the module's own start starts it, once its files are written).
   */
  | {
      do: 'package';
      module: string;
      package: string;
      /**
       * Exactly; none only for an unpinned package planned before a refresh of the lists.
       * Removed or purged, the version that was installed.
       */
      version?: string;
      how: 'install' | 'upgrade' | 'downgrade' | 'remove' | 'purge';
      from?: string;
      /** What the package manager installs beside this module's packages (on its last one). */
      with?: PackageMove[];
      /** The module's packages `with` is of, when they are several (on its last one). */
      withFor?: string[];
      /**
       * Planned on lists the act refreshes first: it is planned again on what they offer
       * then, and installs that (its pin, or their candidate), said as it goes.
       */
      afterRefresh?: true;
      /** Owners the module names that its packages make (on its last one): looked up once they are. */
      lookUp?: { users: string[]; groups: string[] };
      holdStarts: boolean;
    }
  /**
   * berth's hold on service starts that an install killed half-way left on the node (its
   * policy-rc.d) lifted, before anything else of the node's packages; `kept`: the node's
   * own is put back.
   */
  | { do: 'unhold'; module: string; kept: boolean }
  /**
   * The node's package lists refreshed (apt-get update) before the act installs: they are
   * `age` seconds old (none: never fetched), and `limit` (refresh_after) is the most they
   * may be, a module's (`by`) or berth.json's.
   */
  | { do: 'refresh'; module: string; age?: number; limit: string; by?: string }
  /**
   * The module's setup, after its files and before its start or reload; `pending`: owed
   * by an act that began it, or was cut before it, and did not see it succeed.
   */
  | { do: 'setup'; module: string; script: string; pending?: true; timeout?: number }
  /** `timeout`: the definition's, in milliseconds, when it names one. */
  | { do: 'start'; module: string; script: string; check?: CheckOutcome; timeout?: number }
  /** After writes to a module berth runs; without `script`, there is none to run. */
  | { do: 'reload'; module: string; script?: string; pending?: true; timeout?: number }
  | { do: 'stop'; module: string; script: string; timeout?: number }
  /**
   * Records that berth manages the module; a take also records that the node is to run it,
   * and the module's packages it found installed (`packages`, by name: version).
   */
  | {
      do: 'manage';
      module: string;
      started: boolean;
      via?: 'take';
      packages?: Record<string, string>;
    }
  /** `packages`: those the module names, which release leaves installed. */
  | { do: 'release'; module: string; packages?: string[] };

export type StepKind = Step['do'];

/** Why a file is written, as a value: the preview says it in words. */
export type WriteReason =
  | { because: 'install' }
  | { because: 'missing' }
  /** `reading`: the values and facts the lines that differ read (`value workers`). */
  | { because: 'differs'; diff: string[]; reading?: string[] }
  | { because: 'drift'; drift: Drift[] }
  | { because: 'carries-minted-secret' };

/**
 * A step that changes the machine's files: a directory, a secret minted, restored, rotated
 * or renewed, a file.
 */
export type FileStep = Step & { do: 'mkdir' | 'mint' | 'restore' | 'rotate' | 'renew' | 'write' };

const FILE_STEPS: ReadonlySet<Step['do']> = new Set([
  'mkdir',
  'mint',
  'restore',
  'rotate',
  'renew',
  'write',
]);

export function changesFiles(step: Step): step is FileStep {
  return FILE_STEPS.has(step.do);
}

/** A module's steps, in the order the act takes them. */
export interface ModuleSteps {
  module: string;
  steps: Step[];
}
