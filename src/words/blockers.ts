import type { Blocker } from '../model/blocker.ts';
import { BLOCKER_CODES } from '../model/codes.ts';
import type { FactName } from '../model/facts.ts';
import { doesNotResolve } from '../model/resolve.ts';
import type { BlockerReport, NodeReport, NodeResult } from '../model/result.ts';
import { undeclaredWords, valueProblemWords } from '../model/values.ts';
import { describeAgeBeyond, describeDuration } from '../utils/duration.ts';
import { packageBlockerWords } from './packages.ts';

/**
 * A blocker as the answer carries it (`--json`, the API, the journal, the kept survey):
 * its code and kind, the facts a script matches, and its words for the node it stands on.
 */
export function blockerReport(blocker: Blocker, node: string): BlockerReport {
  return {
    code: BLOCKER_CODES[blocker.because],
    kind: blocker.because,
    ...('module' in blocker && blocker.module !== undefined ? { module: blocker.module } : {}),
    ...('path' in blocker ? { path: blocker.path } : {}),
    ...('package' in blocker && blocker.package !== undefined ? { package: blocker.package } : {}),
    ...('version' in blocker && blocker.version !== undefined ? { version: blocker.version } : {}),
    ...('offered' in blocker ? { offered: blocker.offered } : {}),
    words: blockerWords(blocker, node),
  };
}

/** A node's part of the typed result as the answer carries it: each blocker with its words. */
export function nodeReportOf(result: NodeResult, node: string): NodeReport {
  return { ...result, blockers: result.blockers.map((blocker) => blockerReport(blocker, node)) };
}

/** A blocker in words, as a preview lists it and the act is refused with it: take's and converge's. */
export function blockerWords(blocker: Blocker, node: string): string {
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
    case 'no-such-account': {
      const { module, kind, name, path } = blocker;
      return `${module} names ${kind === 'user' ? 'owner' : 'group'} ${name} for ${path}, but ${node} has no ${kind} ${name}: add it on ${node}, or name another in the definition`;
    }
    case 'account-stale':
      return `the account of ${node} is ${describeAgeBeyond(blocker.age, blocker.flip)} old; the flip allows ${describeDuration(blocker.flip)}; adopt ${node} again`;
    case 'mint-not-a-secret':
      return `--mint names ${blocker.secret}, which is not a secret of ${blocker.module}`;
    case 'mint-found':
      return `--mint names ${blocker.secret}, which was found on ${node}; berth mints only what is missing`;
    case 'mint-kept':
      return `--mint names ${blocker.secret}, which berth's vault keeps; berth restores it rather than mint over it`;
    case 'mint-over-data':
      return `${blocker.secret} is to be minted, but ${blocker.module}'s data was found on ${node}: berth will not mint it unless named with --mint ${blocker.secret} (a command-line option)`;
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
