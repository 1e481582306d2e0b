import type { KeyKind, KeySecretKind } from '../keys/kinds.ts';
import type { Ownership } from '../model/catalog.ts';
import type { ReadingBlocker } from './gather-readings.ts';
import type { PackageBlocker } from './package-plan.ts';
import type { NoSuchAccount } from './steps/owners.ts';
import type { Attributes, CertificateFile, CheckOutcome, WriteReason } from './steps/step.ts';

/** What refuses a take's act, as a value: the preview and the refusal say it in words. */
export type TakeRefusal =
  | { because: 'account-stale'; node: string; age: number; flip: number }
  /** A path through a link another user could have placed: its words are the survey's. */
  | { because: 'link'; path: string; words: string }
  | {
      because: 'mint-not-a-secret' | 'mint-found' | 'mint-kept' | 'mint-over-data';
      secret: string;
    }
  /** A key secret's file that holds no key of its kind. */
  | { because: 'not-a-key'; secret: string; path: string; kind: KeySecretKind; words: string }
  /** A `tls` secret's key found without a certificate for it. */
  | { because: 'certificate-refused'; secret: string; path: string; words: string }
  /** A secret file berth writes names an owner or group the machine does not know. */
  | NoSuchAccount
  /** A value or fact the module reads cannot be had: what differs could not be said. */
  | ReadingBlocker;

/** Where a secret comes from when a module is taken. */
export type Origin = 'found' | 'vault' | 'mint';

export interface TakePlan {
  /** Each data path: found, or not (`empty` when it is there and empty). */
  data: { path: string; found: boolean; empty?: true }[];
  secrets: ({
    name: string;
    path: string;
    origin: Origin;
    bytes: number;
    /** A secret inside its file: read out with this expression; placed by the file's write. */
    match?: string;
    /** What a secret file berth writes is written with (not for one found or inside a file). */
    attributes?: Attributes;
    /** A key secret: its kind; found, the key's own kind and kid; a `tls` secret's certificate. */
    key?: {
      kind: KeySecretKind;
      found?: { keyKind: KeyKind; kid: string };
      certificate?: CertificateFile;
    };
  } & Ownership)[];
  /** The secrets `--mint` names: the preview shows what the act with the same options does. */
  mint: string[];
  /** What the act would be refused for (besides an account too old, which time brings). */
  refusals: TakeRefusal[];
  /** What the module's check said, when it has one and the machine holds something. */
  check?: CheckOutcome;
  /** The files that differ from what berth would write (the next converge rewrites them). */
  files?: { path: string; why: WriteReason & { because: 'missing' | 'differs' } }[];
  /**
   * The packages the module names, as the node has them: `installed` when it is (at its
   * pin or not); one missing, or not at its pin, the next converge installs.
   */
  packages?: TakenPackage[];
  /** Why the node's packages could not be looked at: the next converge is blocked on it. */
  packagesBlocker?: PackageBlocker;
}

/** A package a taken module names, as the take found it. */
export interface TakenPackage {
  name: string;
  /** The version the definition pins, when it pins one. */
  pinned?: string;
  /** The version installed, when it is. */
  installed?: string;
}

/** Whether a package the take found is as the module wants it: installed, at its pin if it has one. */
export function foundAsWanted(item: TakenPackage): boolean {
  return (
    item.installed !== undefined && (item.pinned === undefined || item.pinned === item.installed)
  );
}
