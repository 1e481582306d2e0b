import type { Asked } from '../model/asked.ts';
import type { Change } from '../model/change.ts';
import type { RefusalOf } from '../model/refusal.ts';

/** What changed on a node since a preview, in the operator's words. */
export function changeWords(change: Change, node: string): string {
  switch (change.kind) {
    case 'other-preview':
      return `that digest is of a preview of berth ${previewOf(change.was)}, not of berth ${previewOf(change.is)}`;
    case 'assigned':
      return `${node} is now to run ${change.module}`;
    case 'unassigned':
      return `${node} is no longer to run ${change.module}`;
    case 'managed':
      return `berth now manages ${change.module} on ${node}`;
    case 'unmanaged':
      return `berth no longer manages ${change.module} on ${node}`;
    case 'record':
      return `the record of ${change.module} on ${node} changed`;
    case 'definition':
      return `the definition of ${change.module} changed`;
    case 'data':
      return `data ${change.path} of ${change.module} is ${change.found ? 'now found' : 'no longer found'} on ${node}`;
    case 'secret':
      return `secret ${change.secret} of ${change.module} changed on ${node}`;
    case 'file':
      return `file ${change.path} changed on ${node}`;
    case 'written':
      return `what berth writes to ${change.path} for ${change.module} changed`;
    case 'value':
      return `value ${change.name} of ${change.module} is now ${quoted(change.is)}, was ${quoted(change.was)}`;
    case 'fact':
      return `fact ${change.name} of ${node} is now ${quoted(change.is)}, was ${quoted(change.was)}`;
    case 'package-removed':
      return `package ${change.package} is no longer installed on ${node} (it was ${change.was})`;
    case 'package-installed':
      return `package ${change.package} is now installed on ${node} at ${change.version}`;
    case 'package-version':
      return `package ${change.package} on ${node} is now at ${change.is}, not ${change.was}`;
    case 'package-candidate':
      return `${node}'s package lists now offer ${change.package} ${change.is ?? 'at no version'}, not ${change.was ?? 'at none'}`;
    case 'package-offered':
      return `${node}'s package lists now offer ${change.package} at ${change.is.join(', ') || 'no version'}, not ${change.was.join(', ') || 'none'}`;
    case 'package-bits':
      return `${node}'s package lists now give ${change.package} ${change.version} other bits (SHA256 ${shortHashes(change.is)}, not ${shortHashes(change.was)})`;
    case 'package-simulation':
      return `what apt would install with ${change.module}'s packages on ${node} changed`;
    case 'rotation-added':
      return `the preview did not rotate ${change.secret} of ${change.module}`;
    case 'rotation-dropped':
      return `${change.secret} of ${change.module} is no longer asked to rotate`;
    case 'rotation-key':
      return `the key rotating for ${change.secret} of ${change.module} is ${change.is === undefined ? 'gone' : `kid ${change.is}`}, not kid ${change.was}, which that preview named`;
    case 'check':
      return change.code === 0
        ? `the check of ${change.module} now passes`
        : `the check of ${change.module} now fails (exit ${change.code})`;
    case 'check-dropped':
      return `the check of ${change.module} is no longer run`;
  }
}

/** Each node of a target whose preview changed, in words: what changed on it, or that it did. */
export function nodesChangedWords(refusal: RefusalOf<'digest-stale-nodes'>): string[] {
  if (refusal.nodes.length === 0) return [`the nodes of ${refusal.target} changed`];
  return refusal.nodes.map(({ node, changes }) => {
    if (changes === undefined) return `${node} was not in that preview`;
    if (changes.length === 0) return `${node}: its preview changed`;
    return `${node}: ${changes.map((change) => changeWords(change, node)).join('; ')}`;
  });
}

/** A preview's command as an operator types it after `berth`: `converge box --filter gitea`. */
function previewOf(asked: Asked | { node: string; earlier: true }): string {
  if ('earlier' in asked) return `${asked.node} (a preview of an earlier berth)`;
  const { command, node, module, filter } = asked;
  if (module !== undefined) return `${command} ${node} ${module}`;
  return filter === undefined ? `${command} ${node}` : `${command} ${node} --filter ${filter}`;
}

/** A value or fact as a preview read it: `"www.example.org"`, `8`, or none. */
function quoted(value: unknown): string {
  return value === undefined ? 'not given' : JSON.stringify(value);
}

/** Hashes as words say them: their first 16 digits, enough to tell them apart. */
function shortHashes(hashes: readonly string[]): string {
  return hashes.length === 0 ? 'none' : hashes.map((hash) => `${hash.slice(0, 16)}…`).join(', ');
}
