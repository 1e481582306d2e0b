import type { ModuleDefinition } from '../catalog.ts';
import { compareVersions } from '../packages/debian-version.ts';
import type { PackageFacts } from '../packages/packages.ts';
import type { ConvergePlan } from './converge-plan.ts';
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

/**
 * A module's packages, planned: a step for each package to install, upgrade or downgrade
 * (exact versions, what apt installs beside them on the last), or blockers. A package
 * installed and not pinned is left as it is: berth never upgrades what is not pinned.
 */
export function packageSteps(
  module: string,
  definition: ModuleDefinition,
  facts: PackageFacts | undefined,
  holdStarts: boolean,
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
    const { installed } = state;
    if (spec.version === undefined ? installed !== undefined : installed === spec.version) continue;
    const version = spec.version ?? state.candidate;
    if (version === undefined || !state.offered.includes(version)) {
      blockers.push({
        because: 'package-unavailable',
        module,
        package: spec.name,
        ...(spec.version === undefined ? {} : { version: spec.version }),
        offered: state.offered,
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
  // The simulation was of every package together: with one unavailable, it is apt's refusal of that.
  if (blockers.length > 0 || steps.length === 0) return { steps, blockers };
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
  const asked = new Set(steps.map((step) => step.package));
  const beside = simulation.installs.filter((move) => !asked.has(move.package));
  const last = steps.at(-1);
  if (last && beside.length > 0) last.with = beside;
  return { steps, blockers };
}

/** Whole days the node's package lists have not been fetched, when a day or more. */
export function listsDaysOld(facts: PackageFacts | undefined): number | undefined {
  if (facts?.manager !== 'apt' || facts.listsAge === undefined) return undefined;
  const days = Math.floor(facts.listsAge / 86_400);
  return days >= 1 ? days : undefined;
}

/**
 * Steps of the node's packages as a whole (lifting a hold on service starts a killed
 * install left), made for a module by `stepsFor`, put before anything else the act does to
 * packages: in the first module acted on that has packages (after recording that berth
 * manages it), else as an update of the first managed one that has them (`managed`).
 */
export function beforePackages(
  modules: ConvergePlan['modules'],
  withPackages: ReadonlySet<string>,
  managed: readonly string[],
  stepsFor: (module: string) => Step[],
): void {
  const first = modules.find((item) => item.action !== 'release' && withPackages.has(item.module));
  if (first) {
    const steps = stepsFor(first.module);
    const at = first.steps.findIndex((step) => step.do !== 'manage');
    first.steps.splice(at === -1 ? first.steps.length : at, 0, ...steps);
    return;
  }
  const module = managed.find((name) => withPackages.has(name));
  if (module === undefined) return;
  const releases = modules.filter((item) => item.action === 'release').length;
  modules.splice(releases, 0, { module, action: 'update', steps: stepsFor(module) });
}
