import type { Blocker, ConvergePlan } from '../commands/converge-plan.ts';
import { noSuchAccountWords } from '../commands/steps/owners.ts';
import type { DiffShownOnce } from '../diff/diff-shown.ts';
import type { FactName } from '../model/facts.ts';
import { doesNotResolve } from '../model/resolve.ts';
import { undeclaredWords, valueProblemWords } from '../model/values.ts';
import { listsOldWords, packageBlockerWords } from './packages.ts';
import { previewWords } from './steps.ts';

/**
 * A converge preview in words: each module's steps, the blockers, and the digest; each
 * file's diff whole with `fullDiff`, else its settings first and about 40 lines.
 */
export function describePreview(
  title: string,
  node: string,
  plan: ConvergePlan,
  { nothingToDo, digest }: { nothingToDo: boolean; digest: string },
  fullDiff = false,
  shownOnce?: DiffShownOnce,
) {
  const lines = [title];
  for (const { module, action, steps } of plan.modules) {
    lines.push(`${action} ${module}:`);
    for (const step of steps) lines.push(`  ${previewWords(step, node, fullDiff, shownOnce)}`);
  }
  if (plan.listsDaysOld !== undefined) lines.push(listsOldWords(node, plan.listsDaysOld));
  for (const blocker of plan.blockers) lines.push(`blocked: ${describeBlocker(blocker, node)}`);
  if (plan.blockers.length > 0) lines.push('the act will be refused while a blocker stands');
  if (nothingToDo) lines.push(`${node} is as assigned: nothing to do, so yes alone is enough`);
  lines.push(`digest ${digest}`);
  return lines.join('\n');
}

/** A blocker in words, as the preview lists it and the act is refused with it. */
export function describeBlocker(blocker: Blocker, node: string): string {
  switch (blocker.because) {
    case 'does-not-resolve':
      return doesNotResolve(blocker.module, node, blocker.unresolved);
    case 'needs-not-running':
      return `${blocker.module} needs ${blocker.needs.join(' and ')}, which berth does not run on ${node} yet: converge ${node} --filter ${blocker.needs[0]} first, or converge ${node} as a whole`;
    case 'held-not-managed': {
      const { held, module } = blocker;
      const what =
        held.kind === 'data'
          ? `${module}'s data (${held.paths.join(', ')})`
          : held.kind === 'secret'
            ? `${module}'s ${counted('secret', held.names)}`
            : `${module}'s ${counted('file', held.paths)}`;
      return `${node} holds ${what} but berth does not manage ${module}: take ${module} first`;
    }
    case 'secret-differs':
      return `secret ${blocker.secret} of ${blocker.module} at ${blocker.path} on ${node} is not the one in berth's vault; berth will not overwrite it: move it aside and berth restores the vault's`;
    case 'link':
      return blocker.words;
    case 'no-such-account':
      return noSuchAccountWords(blocker, node);
    case 'package-unavailable':
    case 'no-package-manager':
    case 'packages-not-here':
    case 'package-refused':
    case 'package-malformed':
      return packageBlockerWords(blocker, node);
    case 'value-missing':
    case 'value-wrong-type':
      return valueProblemWords(blocker, node);
    case 'value-undeclared':
      return undeclaredWords(node, blocker.value, blocker.given, blocker.meant);
    case 'fact-unknown':
      return `${blocker.path} of ${blocker.module} reads {{fact ${blocker.fact}}}, which ${node} did not tell: ${FACT_UNTOLD[blocker.fact]}`;
    case 'not-a-key':
      return blocker.kept
        ? `berth's vault keeps ${blocker.secret} of ${blocker.module} as no ${blocker.kind === 'tls' ? 'tls' : blocker.kind} key (${blocker.words}): a secret's kind does not change under its value; give the key another name`
        : `${blocker.path} on ${node} is not ${blocker.kind === 'tls' ? 'a key berth keeps' : `an ${blocker.kind} key`}, which ${blocker.module} names it as secret ${blocker.secret}: ${blocker.words}; berth will not keep or overwrite it: move it aside, or name its kind`;
    case 'certificate-refused':
      return `the tls secret ${blocker.secret} of ${blocker.module} has its key at ${blocker.path} on ${node}, but ${blocker.words}: berth keeps a key with the certificate for it; move the key aside for berth to mint one, or put its certificate where the definition says`;
    case 'certificate-name':
      return `the tls secret ${blocker.secret} of ${blocker.module} is for a name ${node} renders as no name a certificate holds: ${blocker.words}`;
  }
}

/** Why a machine tells no fact of a kind, as far as berth can say. */
const FACT_UNTOLD: Record<FactName, string> = {
  node: 'every node has its name',
  host: 'every node has its host',
  hostname: 'it has no hostname (a directory tree has one in its /etc/hostname)',
  fqdn: 'it has no hostname (a directory tree has one in its /etc/hostname)',
  address: 'no default route was found (`ip route get` gave no source address)',
  codename: 'its /etc/os-release says no VERSION_CODENAME',
  arch: 'neither /proc/sys/kernel/arch nor `uname -m` said',
};

/** "secret a", "secrets a and b", "secrets a, b and c". */
function counted(noun: string, names: string[]): string {
  const last = names.at(-1) ?? '';
  if (names.length <= 1) return `${noun} ${last}`;
  return `${noun}s ${names.slice(0, -1).join(', ')} and ${last}`;
}
