/**
 * Packages as berth sees them on a node, whatever the package manager: what a module asks
 * for, what a survey answers, and what an install answers. The managers themselves are a
 * table (managers.ts); apt is its entry (apt.ts).
 */

/**
 * A package a module names: any version (the candidate), or `version` exactly; or, with
 * `state` absent, none (removed; `purge`, its configuration too).
 */
export interface PackageSpec {
  name: string;
  version?: string;
  state?: 'present' | 'absent';
  purge?: boolean;
}

/** The packages one module names, asked about in a survey (one simulation a module). */
export interface PackageAsk {
  module: string;
  packages: readonly PackageSpec[];
}

/** A package as the node's package database and lists know it. */
export interface PackageState {
  /** The version installed, when it is. */
  installed?: string;
  /** The version the lists would install, when they offer one. */
  candidate?: string;
  /** Every version the lists offer (not the one only the package database knows). */
  offered: string[];
  /** Removed, its configuration left: the version it was. */
  configurationLeft?: string;
}

/** A package apt would install (or upgrade, or downgrade) beside those asked for. */
export interface PackageMove {
  package: string;
  version: string;
  /** The version installed before, when one is. */
  from?: string;
}

/**
 * What a simulated install of one module's packages would do: the set, or apt's refusal
 * (one that would remove a package is one: berth never removes).
 */
export type Simulation =
  | {
      ok: true;
      installs: PackageMove[];
      /** What it would remove (a package a module names absent, or one apt removes for it). */
      removes?: { package: string; purge: boolean }[];
      /**
       * The SHA256 the lists give each archive it installs, by `name=version` (several
       * when several sources offer that version): what a digest covers of its bits.
       */
      archives?: Record<string, string[]>;
    }
  | { ok: false; errors: string[] };

/**
 * What a survey found of a node's packages: a package manager berth knows, with each
 * package asked about, the age of its lists and a simulation a module; none berth knows
 * (`found` names one it does not know); or a directory of this machine that has none of
 * its own (a rooted node whose root is not `/`).
 */
export type PackageFacts =
  | {
      manager: 'apt';
      packages: Record<string, PackageState>;
      /**
       * How old the package lists are, in seconds, by the node's own clock, when something
       * is to be installed; `listsNeverFetched` when there are none.
       */
      listsAge?: number;
      listsNeverFetched?: true;
      /** By module: what installing its packages would do. */
      simulations: Record<string, Simulation>;
      /**
       * berth's hold on service starts (its policy-rc.d), left by an install killed
       * half-way: while it stands no service starts or restarts on the node. `kept`: the
       * node's own one is kept aside, to be put back.
       */
      startsHeld?: { kept: boolean };
      /** What it said that is not in Debian's grammar: berth uses none of it. */
      malformed?: Malformed[];
    }
  | { manager: 'none'; found?: string }
  | { manager: 'not-a-machine'; root: string };

/**
 * A value a node's package manager gave that is not in Debian's grammar (a repository's
 * `Version: 1.0;id>/tmp/x;:`): what it is, of which package (when its name is one), and of
 * which module's simulation (none for what the database and lists say of a package asked
 * about).
 */
export interface Malformed {
  module?: string;
  package?: string;
  what: 'name' | 'version' | 'hash';
  value: string;
}

/** A package to install at exactly this version, or to remove (`purge`: its configuration too). */
export type PackagePin =
  | { name: string; version: string }
  | { name: string; remove: 'remove' | 'purge' };

/** What an install (or a refresh of the lists) did: done, or apt's own error lines (and who held its lock, when busy). */
export type Installed =
  | { ok: true }
  | { ok: false; errors: string[]; busy?: { pid: number; command: string } };

/** A package manager waits for its lock in whole seconds: a wait of 500ms is a second at most, never none. */
export function waitSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
