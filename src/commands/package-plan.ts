import type { ModuleDefinition } from '../model/catalog.ts';
import { compareVersions } from '../packages/debian-version.ts';
import type { PackageFacts, PackageState } from '../packages/packages.ts';
import { parseDuration } from '../utils/duration.ts';
import type { Step } from './steps/step.ts';

/** What stands in the way of installing a module's packages, as a value. */
export type PackageBlocker =
  /** The node's lists do not offer the package, or not the version pinned: what they do offer. */
  | {
      because: 'package-unavailable';
      module: string;
      package: string;
      version?: string;
      offered: string[];
      /** The lists were refreshed just now: another refresh would not find it. */
      refreshed?: true;
    }
  /** The node has no package manager berth knows; `found` one it does not. */
  | { because: 'no-package-manager'; module: string; found?: string }
  /** A rooted node whose root is not `/`: a directory of this machine, with no packages of its own. */
  | { because: 'packages-not-here'; module: string; root: string }
  /** The package manager would not install them (a simulation): its own `E:` lines. */
  | { because: 'package-refused'; module: string; errors: string[] }
  /** The package manager said a name, version or hash that is not in Debian's grammar. */
  | {
      because: 'package-malformed';
      module: string;
      package?: string;
      what: 'name' | 'version' | 'hash';
      value: string;
    };

/** What the plan knows of the node's package lists beside what they say. */
export interface Lists {
  /** The act refreshes them first: what they offer now is not what it installs. */
  refreshing?: boolean;
  /** They were refreshed just now: what they lack, another refresh would not find. */
  refreshed?: boolean;
}

/**
 * A module's packages, planned: a step for each package to install, upgrade or downgrade
 * (exact versions, what apt installs beside them on the last), or blockers. A package
 * installed and not pinned is left as it is: berth never upgrades what is not pinned.
 * With `refreshing`, the act refreshes the lists first: each package to install is planned
 * at its pin, or at what the refreshed lists offer, and their refusals wait for them.
 */
export function packageSteps(
  module: string,
  definition: ModuleDefinition,
  facts: PackageFacts | undefined,
  holdStarts: boolean,
  lists: Lists = {},
): { steps: Step[]; blockers: PackageBlocker[] } {
  if (definition.packages.length === 0 || !facts) return { steps: [], blockers: [] };
  if (facts.manager === 'not-a-machine')
    return { steps: [], blockers: [{ because: 'packages-not-here', module, root: facts.root }] };
  if (facts.manager === 'none') {
    const found = facts.found === undefined ? {} : { found: facts.found };
    return { steps: [], blockers: [{ because: 'no-package-manager', module, ...found }] };
  }
  // Nothing the package manager said is used where some of it is not Debian's.
  const names = new Set(definition.packages.map((spec) => spec.name));
  const malformed = (facts.malformed ?? []).filter((item) =>
    item.module === undefined
      ? item.package !== undefined && names.has(item.package)
      : item.module === module,
  );
  if (malformed.length > 0) {
    // Each value once, whether the lists or the simulation said it.
    const once = new Map(
      malformed.map(({ module: _, ...item }) => [JSON.stringify(item), item] as const),
    );
    return {
      steps: [],
      blockers: [...once.values()].map((item) => ({
        because: 'package-malformed',
        module,
        ...item,
      })),
    };
  }
  const steps: (Step & { do: 'package' })[] = [];
  const blockers: PackageBlocker[] = [];
  for (const spec of definition.packages) {
    const state = facts.packages[spec.name] ?? { offered: [] };
    if (spec.state === 'absent') {
      const removal = removalStep(module, spec, state, holdStarts);
      if (removal) steps.push(removal);
      continue;
    }
    const { installed } = state;
    if (spec.version === undefined ? installed !== undefined : installed === spec.version) continue;
    if (lists.refreshing) {
      steps.push(afterRefresh(module, spec, installed, holdStarts));
      continue;
    }
    const version = spec.version ?? state.candidate;
    if (version === undefined || !state.offered.includes(version)) {
      blockers.push({
        because: 'package-unavailable',
        module,
        package: spec.name,
        ...(spec.version === undefined ? {} : { version: spec.version }),
        offered: state.offered,
        ...(lists.refreshed ? { refreshed: true as const } : {}),
      });
      continue;
    }
    const how =
      installed === undefined
        ? 'install'
        : compareVersions(version, installed) > 0
          ? 'upgrade'
          : 'downgrade';
    steps.push({
      do: 'package',
      module,
      package: spec.name,
      version,
      how,
      ...(installed === undefined ? {} : { from: installed }),
      holdStarts,
    });
  }
  // The simulation was of every package together: with one unavailable, it is apt's refusal
  // of that. Of lists to be refreshed, it says nothing yet.
  if (blockers.length > 0 || steps.length === 0 || lists.refreshing) return { steps, blockers };
  const simulation = facts.simulations[module];
  if (!simulation?.ok)
    return {
      steps: [],
      blockers: [
        {
          because: 'package-refused',
          module,
          errors: simulation?.errors ?? ['no simulation was made'],
        },
      ],
    };
  // berth removes only what a definition names absent; apt removing another is a refusal.
  const absent = new Set(steps.filter(isRemoval).map((step) => step.package));
  const more = (simulation.removes ?? []).filter(
    (removed) => !absent.has(removed.package.split(':')[0] as string),
  );
  if (more.length > 0)
    return {
      steps: [],
      blockers: [
        {
          because: 'package-refused',
          module,
          errors: [
            `it would remove ${more.map((removed) => removed.package).join(', ')} too, and berth removes only a package a definition names absent`,
          ],
        },
      ],
    };
  const asked = new Set(steps.map((step) => step.package));
  const beside = simulation.installs.filter((move) => !asked.has(move.package));
  const last = steps.at(-1);
  if (last && beside.length > 0) {
    last.with = beside;
    // One simulation of them all: what they depend on is of them all, not of the last.
    if (steps.length > 1) last.withFor = steps.map((step) => step.package);
  }
  return { steps, blockers };
}

/** Whether a package step removes (or purges) its package. */
export function isRemoval(step: Step): boolean {
  return step.do === 'package' && (step.how === 'remove' || step.how === 'purge');
}

/**
 * A package a definition names absent, removed when it is installed (its configuration
 * kept), or purged when asked, also when only its configuration is left; nothing when it
 * is as asked.
 */
function removalStep(
  module: string,
  spec: { name: string; purge?: boolean },
  state: PackageState,
  holdStarts: boolean,
): (Step & { do: 'package' }) | undefined {
  const version = state.installed ?? (spec.purge ? state.configurationLeft : undefined);
  if (version === undefined) return undefined;
  return {
    do: 'package',
    module,
    package: spec.name,
    version,
    how: spec.purge ? 'purge' : 'remove',
    holdStarts,
  };
}

/**
 * A package planned before the lists' refresh: at its pin (an upgrade or downgrade of what
 * is installed, named), or, unpinned, at what the refreshed lists offer.
 */
function afterRefresh(
  module: string,
  spec: { name: string; version?: string },
  installed: string | undefined,
  holdStarts: boolean,
): Step & { do: 'package' } {
  const how =
    installed === undefined || spec.version === undefined
      ? 'install'
      : compareVersions(spec.version, installed) > 0
        ? 'upgrade'
        : 'downgrade';
  return {
    do: 'package',
    module,
    package: spec.name,
    ...(spec.version === undefined ? {} : { version: spec.version }),
    how,
    ...(installed === undefined ? {} : { from: installed }),
    holdStarts,
    afterRefresh: true,
  };
}

/**
 * How old the node's package lists may be (`refresh_after`): the least of berth.json's and
 * those of the modules planned, with whose it is (none: berth.json's).
 */
export function refreshLimit(
  settings: string | undefined,
  definitions: ReadonlyMap<string, Pick<ModuleDefinition, 'refresh_after'>>,
): { text: string; ms: number; by?: string } | undefined {
  let least: { text: string; ms: number; by?: string } | undefined;
  const consider = (text: string | undefined, by?: string) => {
    const ms = text === undefined ? undefined : parseDuration(text);
    if (ms !== undefined && (least === undefined || ms < least.ms))
      least = by === undefined ? { text: text as string, ms } : { text: text as string, ms, by };
  };
  consider(settings);
  for (const [module, definition] of definitions) consider(definition.refresh_after, module);
  return least;
}

/** Whether the lists are older than `limit` allows (or were never fetched). */
export function listsStale(facts: PackageFacts | undefined, limit: { ms: number } | undefined) {
  if (facts?.manager !== 'apt' || limit === undefined) return false;
  if (facts.listsNeverFetched) return true;
  return facts.listsAge !== undefined && facts.listsAge * 1000 > limit.ms;
}

/** Whole days the node's package lists have not been fetched, when a day or more. */
export function listsDaysOld(facts: PackageFacts | undefined): number | undefined {
  if (facts?.manager !== 'apt' || facts.listsAge === undefined) return undefined;
  const days = Math.floor(facts.listsAge / 86_400);
  return days >= 1 ? days : undefined;
}
