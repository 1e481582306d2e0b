import type { NodeRefusal, Refusal } from '../model/refusal.ts';
import { doesNotResolve } from '../model/resolve.ts';
import { targetRefusalWords } from '../model/targets.ts';
import { KEPT_PREVIEWS } from '../stores/stores.ts';
import { targetWords } from './asked.ts';
import { blockerWords } from './blockers.ts';
import { changeWords, nodesChangedWords } from './changes.ts';

/**
 * The one renderer of a refusal: its words, for the command line, the API's `refused`,
 * the view and the journal alike, made from the typed value.
 */
export function refusalWords(refusal: Refusal): string {
  switch (refusal.kind) {
    case 'fields-missing':
      return refusal.needsModule ? 'both node and module are needed' : 'node is needed';
    case 'name':
    case 'group-name':
    case 'target-shape':
    case 'target-empty':
    case 'unknown-node':
    case 'unknown-group':
      return targetRefusalWords(refusal);
    case 'secret-name':
      return `${JSON.stringify(refusal.given)} is not a secret name`;
    case 'not-granted': {
      const { subject, command, target, what } = refusal;
      const named = what === 'it' ? 'it' : what === 'every-node' ? 'every node of it' : what.name;
      return `${subject} may not ${command} ${target}: no grant names ${named}`;
    }
    case 'refresh-on-act':
      return `--refresh refreshes the package lists before a preview: preview with it (berth ${refusal.command} ${refusal.target} --refresh), then act on that preview's digest`;
    case 'check-needs-target':
      return 'berth status --check runs checks on a target: berth status TARGET --check';
    case 'secret-usage':
      return 'berth secret takes a node, a module and a secret name';
    case 'no-module':
      return `the catalog has no module ${refusal.module}${meant(refusal.meant)}`;
    case 'config':
    case 'vault':
      return refusal.message;
    case 'stores':
      return `the stores cannot be opened: ${refusal.unforeseen ? 'unexpected: ' : ''}${refusal.message}`;
    case 'rekey-unopened':
      return `berth's identity cannot open ${refusal.unopened.join(', ')}; kept as sealed before: rekey again with an identity they were sealed to`;
    case 'module-entry':
      return `${doesNotResolve(refusal.module, refusal.node, { why: 'not-valid', problem: refusal.problem })}${meant(refusal.meant)}`;
    case 'does-not-resolve':
      return `${doesNotResolve(refusal.module, refusal.node, refusal.unresolved)}${meant(refusal.meant)}`;
    case 'already-managed':
      return `berth already manages ${refusal.module} on ${refusal.node}`;
    case 'not-adopted':
      return `no account of ${refusal.node} yet; adopt it first`;
    case 'not-in-account': {
      const { node, module } = refusal;
      return `the account of ${node} says nothing of ${module} (it was taken before ${module} was in the catalog); adopt ${node} again`;
    }
    case 'not-managed':
      return `berth does not manage ${refusal.module} on ${refusal.node}; there is nothing to forget`;
    case 'still-assigned': {
      const { node, module } = refusal;
      return `${node} is to run ${module}; berth forgets only what is no longer assigned: unassign it first (berth unassign ${node} ${module})`;
    }
    case 'declared-in-config':
      return `${refusal.node} is to run ${refusal.module} because berth.json declares it (run.${refusal.from.join(', run.')}); remove it there to stop running it`;
    case 'not-assigned':
      return `${refusal.node} is not to run ${refusal.module}; there is nothing to unassign${meant(refusal.meant)}`;
    case 'still-needed': {
      const { module, node, neededBy } = refusal;
      return `${module} is needed by ${neededBy.join(' and ')}, which ${node} is to run; unassign ${neededBy[0]} first`;
    }
    case 'secret-not-kept':
      return `the vault keeps no secret ${refusal.secret} of ${refusal.module} for ${refusal.node}`;
    case 'secret-unreadable': {
      const { secret, module, path, node, why } = refusal;
      const reason =
        why === 'directory'
          ? 'it is a directory, not a file'
          : why === 'other'
            ? 'it is not a file'
            : why.reason;
      return `secret ${secret} of ${module} at ${path} on ${node} cannot be read: ${reason}`;
    }
    case 'secret-changed': {
      const { secret, module, node } = refusal;
      return `secret ${secret} of ${module} changed on ${node} since the account was taken; adopt ${node} again`;
    }
    case 'rotate-unknown':
      return `--rotate ${refusal.name} names no secret of the modules ${refusal.node} is to run${meant(refusal.meant)}`;
    case 'rotate-not-a-key': {
      const { name, modules } = refusal;
      return `--rotate ${name}: ${name} of ${modules.join(' and ')} is a random secret, and berth rotates keys and certificates alone (kind ec-p256, ed25519, rsa-3072 or tls)`;
    }
    case 'check-not-run':
      return `a check could not be run: ${refusal.message}`;
    case 'refresh-busy':
      return `apt on ${refusal.node} is busy (held by ${refusal.command}, pid ${refusal.pid}); its package lists were not refreshed`;
    case 'refresh-failed':
      return `refreshing ${refusal.node}'s package lists failed: ${refusal.message}`;
    case 'digest-needed': {
      const { asked } = refusal;
      return `a ${asked.command} acts on a preview: preview it (berth ${targetWords(asked.command, asked)}), then act with yes and its digest`;
    }
    case 'invalid-digest':
      return `${JSON.stringify(refusal.given.slice(0, 80))} is not a digest: a digest is the 64 lower-case hex characters on the last line of a preview`;
    case 'digest-stale':
      return changedSince(
        refusal.given,
        refusal.changes.map((change) => changeWords(change, refusal.node)),
        '',
      );
    case 'digest-stale-nodes':
      return changedSince(
        refusal.given,
        nodesChangedWords(refusal),
        '; nothing was done on any node',
      );
    case 'digest-unkept':
      return changedSince(
        refusal.given,
        [
          `no node of ${refusal.target} keeps that preview: it was made with another state or store, or more than ${KEPT_PREVIEWS} previews ago`,
        ],
        '; nothing was done on any node',
      );
    case 'plan-acted-on':
      return `${refusal.file} was acted on already, at ${refusal.at} by ${refusal.by}; nothing was done: preview again for a new plan`;
    case 'plan-gone': {
      const { nodes, file } = refusal;
      return `${nodes.join(', ')} no longer ${nodes.length === 1 ? 'keeps' : 'keep'} the preview of ${file} (a node keeps its latest ${KEPT_PREVIEWS}); nothing was done: preview again`;
    }
    case 'plan-edited':
      return `${refusal.file} was edited since berth wrote it: what it shows is not the preview its digest names; nothing was done: preview again with --out`;
    case 'plan-elsewhere': {
      const { file, target, madeWith, using } = refusal;
      return madeWith === using
        ? `no node of ${target} keeps the preview of ${file}: it was made with another store than the one ${using} names now, or more than ${KEPT_PREVIEWS} previews ago; nothing was done: preview again`
        : `${file} was made with the state ${madeWith}, and this berth uses ${using}, where no node of ${target} keeps its preview; nothing was done: act on it with --state ${madeWith}, or preview again`;
    }
    case 'plan-unwritten':
      return `berth could not write the plan file ${refusal.file}: ${refusal.message}`;
    case 'blocked': {
      const words = refusal.blockers.map((blocker) => blockerWords(blocker, refusal.node));
      return `the act is refused while ${words.length === 1 ? 'a blocker stands' : 'blockers stand'}: ${words.join('; ')}`;
    }
    case 'blocker':
      return blockerWords(refusal.blocker, refusal.node);
    case 'stopped': {
      const { command, node, module, how } = refusal;
      const why =
        typeof refusal.why === 'string'
          ? refusal.why
          : refusal.why.blockers.map((blocker) => blockerWords(blocker, node)).join('; ');
      if (command === 'take') return `the take of ${module} on ${node} stopped: ${why}`;
      return how === 'stopped'
        ? `converge of ${node} stopped before ${module}'s next step: ${why}`
        : `converge of ${node} stopped at ${module}: ${why}`;
    }
    case 'unreachable':
      return `${refusal.node} cannot be reached: ${refusal.message}`;
    case 'failed':
      return `${refusal.command} failed: ${refusal.message}`;
    case 'unjournaled': {
      const { command, ended, message } = refusal;
      if (refusal.refusal === undefined)
        return `${command} was done, but the journal could not record it: ${message}`;
      return `${refusalWords(refusal.refusal)} (and the journal could not record this ${ended === 'failed' ? 'failure' : 'refusal'}: ${message})`;
    }
    case 'node-stores':
      return `${refusal.node}: ${refusalWords(refusal.refusal)}`;
    case 'nodes':
      return refusal.nodes.map(nodeRefusalWords).join('\n');
  }
}

/** A node of a target, in the target's refusal: its own words, or that it was not begun. */
function nodeRefusalWords({ node, refusal }: NodeRefusal): string {
  if (refusal === undefined) return `${node}: not begun, as a batch before it had a node fail`;
  return `${node}: ${refusalWords(refusal)}`;
}

/** The hint a refusal ends with: `; did you mean gitea?`, or nothing. */
function meant(name: string | undefined): string {
  return name === undefined ? '' : `; did you mean ${name}?`;
}

/** The words of a stale digest: what changed since it, when berth can tell. */
function changedSince(given: string, changes: readonly string[], after: string): string {
  const shown = `${given.slice(0, 12)}…`;
  const what = changes.length === 0 ? '' : `: ${changes.join('; ')}`;
  return `the preview changed since digest ${shown}${what}${after}; preview again`;
}

/** A refusal's words, or undefined when there is none. */
export function refusedWords(refusal: Refusal | undefined): string | undefined {
  return refusal === undefined ? undefined : refusalWords(refusal);
}
