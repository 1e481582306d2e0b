/**
 * Flags that users of other tools type out of habit — Ansible's --limit, --check, --forks,
 * --tags and serial, Terraform's -auto-approve, pyinfra's --dry, apt's -y, journalctl's
 * -n — answered in one line with berth's way of doing the same, rather than a bare "has no
 * option".
 */

/** What a command offers that a habit's answer may point to. */
export interface HabitCommand {
  name: string;
  /** Whether its first word is a target (`@web,!web3`). */
  takesTarget: boolean;
  /** Whether it takes a module after the target. */
  takesModule: boolean;
  /** Whether it previews without --yes and acts with it. */
  previews: boolean;
  /** Its own long options (`--parallel`, `--filter`). */
  offers: readonly string[];
}

type Answer = (command: HabitCommand) => string | undefined;

const narrowed: Answer = ({ name, takesTarget, takesModule, offers }) =>
  !takesTarget
    ? undefined
    : offers.includes('--tail')
      ? `name the nodes in the target instead (berth ${name} @web,!web3), or the last N acts with --tail N`
      : `name the nodes in the target instead (berth ${name} @web,!web3${takesModule ? ' <module>' : ''})`;

const lastOnes: Answer = ({ offers }) =>
  offers.includes('--tail') ? '--tail N shows the last N acts' : undefined;

const dryRun: Answer = ({ name, previews }) =>
  previews
    ? `a preview is what berth ${name} does without --yes, and it shows each file's diff`
    : undefined;

const diff: Answer = ({ name, previews }) =>
  previews
    ? `berth ${name} without --yes previews, showing each file's diff (all of it with --full-diff)`
    : undefined;

const approved: Answer = ({ previews }) =>
  previews
    ? '--yes acts; --yes --digest D acts on exactly the preview that printed digest D'
    : undefined;

const forks: Answer = ({ offers }) =>
  offers.includes('--parallel')
    ? '--parallel N acts on at most N nodes of the target at once (default 10)'
    : undefined;

const serial: Answer = ({ offers }) =>
  offers.includes('--batch')
    ? '--batch N acts on N nodes at a time, beginning no further batch after one where a node failed'
    : undefined;

const tags: Answer = ({ name, takesModule, offers }) =>
  offers.includes('--filter')
    ? `--filter MODULE acts on that module alone (berth ${name} @web --filter redis)`
    : takesModule
      ? `name the module instead (berth ${name} @web <module>)`
      : undefined;

const HABITS: Record<string, Answer> = {
  '--limit': narrowed,
  '-l': narrowed,
  '--check': dryRun,
  '-C': dryRun,
  '--dry-run': dryRun,
  '--dry': dryRun,
  '--diff': diff,
  '-auto-approve': approved,
  '--auto-approve': approved,
  '-y': approved,
  '--forks': forks,
  '--serial': serial,
  '--tags': tags,
  '-n': lastOnes,
};

/** The answer to a flag the command does not have, if users of another tool type it, or undefined. */
export function habitAnswer(command: HabitCommand, typed: string): string | undefined {
  return Object.hasOwn(HABITS, typed) ? HABITS[typed]?.(command) : undefined;
}

/** The habits written with one dash (`-auto-approve`), which mri reads letter by letter. */
export const ONE_DASH_HABITS = Object.keys(HABITS).filter((flag) => !flag.startsWith('--'));
