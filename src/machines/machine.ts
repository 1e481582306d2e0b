import type { MachineFacts } from '../model/facts.ts';
import type { Installed, PackageAsk, PackageFacts, PackagePin } from '../packages/packages.ts';
import { describeDuration } from '../utils/duration.ts';

export interface InstallOptions {
  waitMs: number;
  holdStarts: boolean;
}

/**
 * How long a hook or check may run unless its definition's `timeout` says otherwise: a
 * check that never answers (its service's user decides whether it does) holds the node's
 * lock no longer than this.
 */
export const HOOK_DEADLINE_MS = 30_000;

/**
 * A hook stopped is sent SIGTERM, and SIGKILL this long after if anything of its process
 * group is still there (a hook may ignore SIGTERM): short enough that an act stopped at
 * berth api's close deadline still records what it did and is answered within the close.
 */
export const STOP_GRACE_MS = 500;

/** Why berth stopped a hook: its deadline passed, or berth was told to stop (`signal`). */
export type StoppedBy = 'deadline' | 'berth';

/**
 * When a running hook is to be stopped, whatever the machine: `signal` aborts (berth
 * stops), or its deadline passes. Calls `stop` with the reason; the function it returns
 * lets go of both once the hook is done.
 */
export function whenToStop(
  options: Pick<RunOptions, 'signal' | 'deadlineMs'>,
  stop: (why: StoppedBy) => void,
): () => void {
  const { signal } = options;
  const onAbort = () => stop('berth');
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const limit = setTimeout(() => stop('deadline'), options.deadlineMs ?? HOOK_DEADLINE_MS);
  return () => {
    clearTimeout(limit);
    signal?.removeEventListener('abort', onAbort);
  };
}

/** The line a machine adds to a stopped hook's output: `stopped by berth`, or by its deadline. */
export function stoppedLine(why: StoppedBy, deadlineMs: number | undefined): string {
  return why === 'berth'
    ? 'stopped by berth'
    : `stopped by berth: its ${describeDuration(deadlineMs ?? HOOK_DEADLINE_MS)} deadline passed`;
}

/**
 * How much of a hook's output a machine keeps: the end of it, as it came, for a refusal's
 * words. Far more than the words keep (SHOWN_OUTPUT), because the caller clears secrets
 * out of it first and cuts it after: cut first, a secret straddling the cut would leave
 * its tail, which no clearing could then recognise.
 */
export const RAW_OUTPUT_KEPT = 64 * 1024;

/** One path a survey asks about; `read` asks for the bytes of a file too. */
export interface SurveyPath {
  path: string;
  read?: boolean;
}

/** What a path on a machine is, as far as berth needs to know. */
export type PathFacts =
  | { kind: 'missing' }
  | {
      kind: 'file';
      size: number;
      /** Permission bits as four octal digits: "0640". */
      mode: string;
      uid: number;
      gid: number;
      /** The file's bytes, when asked for and no larger than READ_LIMIT (limits.ts). */
      bytes?: Uint8Array;
    }
  | { kind: 'directory'; empty: boolean; mode: string; uid: number; gid: number }
  | { kind: 'other' }
  /** The path exists but berth may not look (permission denied). */
  | { kind: 'unreadable'; reason: string }
  /**
   * The path, or a directory above it (`at`), is a link that a user other than root could
   * have placed: a symbolic link not owned by root or in a directory another user may
   * write, or (`hard`) a file with more than one name in such a directory. berth never
   * reads, writes, chowns or chmods through it; its owner (`uid`, and `owner` when the
   * machine knows the name) is what the words name.
   */
  | { kind: 'link'; at: string; uid: number; owner?: string; hard?: true };

/**
 * The words of a link berth will not follow, for a survey's path (a blocker) or a change's
 * (a refusal): `/srv/app/data is a symbolic link owned by app; berth does not follow links
 * that another user could have placed`.
 */
export function linkWords(
  path: string,
  fact: { at: string; uid: number; owner?: string; hard?: true },
): string {
  const owner = fact.owner ?? `uid ${fact.uid}`;
  const what = fact.hard
    ? `${fact.at} is a hard link owned by ${owner}, in a directory another user may write`
    : `${fact.at} is a symbolic link owned by ${owner}`;
  const where = fact.at === path ? '' : `${path}: `;
  return `${where}${what}; berth does not follow links that another user could have placed`;
}

/** User and group names a survey is to resolve on the machine, alongside its paths. */
export interface AccountNames {
  users: readonly string[];
  groups: readonly string[];
}

/** The ids of the names asked for that exist on the machine; a name not there is absent. */
export interface Accounts {
  users: ReadonlyMap<string, number>;
  groups: ReadonlyMap<string, number>;
  /**
   * The user and group berth acts as there (root's, as a rule), when the machine says: a
   * secret's file another user owns is not kept as it was (steps/owners.ts).
   */
  actor?: { uid: number; gid: number };
}

/**
 * A survey's answer, path by path; `accounts` when names were asked for, `packages` when
 * packages were, `facts` when they were.
 */
export type Survey = ReadonlyMap<string, PathFacts> & {
  accounts?: Accounts;
  packages?: PackageFacts;
  facts?: MachineFacts;
};

/** What else a survey asks: `facts`, what the machine is (its hostname, address, …). */
export interface SurveyAsks {
  facts?: boolean;
}

/** A directory's owner and mode, set when given (whether it was just made or not). */
export interface DirectoryOptions {
  mode?: number;
  uid?: number;
  gid?: number;
}

export interface WriteOptions {
  /** Permission bits, set before the file takes its name. */
  mode: number;
  uid?: number;
  gid?: number;
}

/**
 * One change a batch makes: a directory made (as `mkdir -p`; an existing one is left as it
 * is but for the owner, group and mode `options` names, which the directory itself is
 * given), or a whole file written atomically (a temporary file beside the target, given its
 * mode and owner, then renamed; its directory made first; a dead write's temporary files
 * beside the target removed).
 */
export type Change =
  | { kind: 'directory'; path: string; options?: DirectoryOptions }
  | { kind: 'file'; path: string; data: Uint8Array; options: WriteOptions };

/** What a batch did: its first `done` changes, in order; `failure` why the next was not. */
export interface Applied {
  done: number;
  failure?: MachineError;
}

export interface RunOptions {
  /** Aborting stops the hook and everything it started. */
  signal?: AbortSignal;
  /** Told the hook's output as it comes. */
  output?: (text: string) => void;
  /** How long the hook may run before it is stopped, with everything it started. */
  deadlineMs?: number;
}

export interface RunResult {
  code: number;
  /** The end of what the command wrote, for the refusal when it fails. */
  output: string;
  /** Set when berth stopped the hook: why. */
  stopped?: StoppedBy;
}

/** Why a machine could not do what was asked, as a typed value with words. */
export type MachineFailure = 'unreachable' | 'denied' | 'failed';

export class MachineError extends Error {
  override name = 'MachineError';
  constructor(
    readonly failure: MachineFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A machine berth acts on. Paths are machine paths (absolute, normalised); a rooted
 * machine takes them under its root, an ssh machine on the far side. Every method
 * fails with a MachineError (`apply` answers with one): `unreachable` when the machine
 * cannot be reached at all.
 * `machines/contract.ts` in the tests is its specification.
 */
export interface Machine {
  /**
   * Reaches the machine and answers for every path at once: what an ssh machine does
   * in one round trip. An empty list only checks that the machine can be reached.
   * `names` are resolved in the same round trip (the machine's own passwd and group), and
   * `packages` looked up in its package manager's database and lists, with a simulation
   * of each module's install, which changes nothing; with `asks.facts`, what the machine
   * tells of itself (facts.ts).
   */
  survey(
    paths: readonly SurveyPath[],
    names?: AccountNames,
    packages?: readonly PackageAsk[],
    asks?: SurveyAsks,
  ): Promise<Survey>;
  /**
   * Makes the changes in order, stopping at the first that fails: what an ssh machine
   * does in one round trip. It answers rather than rejects: how many were done, and the
   * failure of the one that was not (`unreachable` when none could be tried).
   */
  apply(changes: readonly Change[]): Promise<Applied>;
  /**
   * Runs a hook with `sh -c` in a process group of its own, its environment extended
   * by `env` and `BERTH_ROOT`. It is done when its shell exits.
   */
  run(script: string, env: Record<string, string>, options?: RunOptions): Promise<RunResult>;
  /**
   * Installs exactly these versions with the machine's package manager, as root, waiting
   * at most `waitMs` for its lock; with `holdStarts`, no service starts meanwhile. Answers
   * rather than rejects when the package manager refuses; a machine with none it knows fails.
   */
  install(pins: readonly PackagePin[], options: InstallOptions): Promise<Installed>;
  /** Fetches the package manager's lists anew (`apt-get update`), as `install` waits and answers. */
  refreshPackages(options: { waitMs: number }): Promise<Installed>;
  /**
   * Lifts berth's hold on service starts that an install killed half-way left (its
   * policy-rc.d), putting the machine's own back; answers as `install` does.
   */
  unholdStarts(): Promise<Installed>;
  /** Lets go of whatever the machine holds open (an ssh connection). */
  close(): Promise<void>;
}

/** How the commands get to a node's machine; the edge decides what reaches it. */
export type ReachMachine = (node: string) => Machine;
