import type { PackageBlocker } from '../commands/package-plan.ts';
import { shownValue } from '../packages/debian-grammar.ts';

/** What the operator does when a node's package lists are old or lack a version. */
export function refreshWords(node: string): string {
  return `refresh them with berth converge ${node} --refresh`;
}

/** A package blocker in words, as the preview lists it and the act is refused with it. */
export function packageBlockerWords(blocker: PackageBlocker, node: string): string {
  switch (blocker.because) {
    case 'package-unavailable': {
      const what =
        blocker.version === undefined ? blocker.package : `${blocker.package} ${blocker.version}`;
      const offer =
        blocker.offered.length === 0
          ? 'they offer no version of it'
          : `they offer ${blocker.offered.join(', ')}`;
      // Lists refreshed just now lack it: another refresh would not find it.
      const todo = blocker.refreshed
        ? `they were refreshed just now: ${blocker.version === undefined ? 'add a source that offers it' : 'pin a version they offer, or add a source that offers this one'}`
        : refreshWords(node);
      return `${what} is not in ${node}'s package lists (${offer}); ${todo}`;
    }
    case 'no-package-manager':
      return blocker.found === undefined
        ? `${node} has no apt, nor another package manager berth knows: berth cannot install ${blocker.module}'s packages there`
        : `${node} has no apt (it has ${blocker.found}): berth installs ${blocker.module}'s packages with apt only`;
    case 'packages-not-here':
      return `${node} is a directory of this machine (${blocker.root}), not a machine with packages of its own: berth installs no packages for ${blocker.module} there`;
    case 'package-refused':
      return `apt on ${node} would not install ${blocker.module}'s packages: ${blocker.errors.join(' ')}`;
    case 'package-malformed': {
      const value = shownValue(blocker.value);
      const said =
        blocker.what === 'name'
          ? `would install a package named ${value}, which is not a Debian package name`
          : blocker.what === 'version'
            ? `gives ${blocker.package} the version ${value}, which is not a Debian version`
            : `gives ${blocker.package} the archive hash ${value}, which is not a SHA256`;
      return `apt on ${node} ${said}: berth uses none of it, and installs nothing for ${blocker.module} (look at the repositories ${node}'s apt reads)`;
    }
  }
}

/** The line a preview begins with after a refresh, and the journal's. */
export function refreshedWords(node: string): string {
  return `refreshed ${node}'s package lists (apt-get update)`;
}

/** The preview's line about package lists a day or more old. */
export function listsOldWords(node: string, days: number): string {
  return `${node}'s package lists are ${days} day${days === 1 ? '' : 's'} old; ${refreshWords(node)}`;
}
