import type { PackageFacts, PackageSpec, PackageState, Simulation } from './packages.ts';

/**
 * What a preview's digest covers of a node's packages: each package's state, each module's
 * simulation (with the SHA256 of each archive it installs).
 */
export interface PackagesBasis {
  packages: Record<string, PackageState>;
  simulations: Record<string, Simulation>;
}

/**
 * The packages basis of a survey, when a module names packages: of a package a module
 * has as it wants it (installed, at its pin if it has one; or absent), only the version
 * installed, so that lists fetched anew do not refuse an act that installs nothing; of any
 * other, its candidate and every version offered too; and what apt would do for each
 * module. Not the lists' age, which moves by the second.
 */
export function packagesBasis(
  surveys: ReadonlyMap<string, { packages?: PackageFacts }>,
  definitions: ReadonlyMap<string, { packages: readonly PackageSpec[] }>,
): PackagesBasis | { manager: string } | undefined {
  const facts = [...surveys.values()].find((survey) => survey.packages)?.packages;
  if (!facts) return undefined;
  if (facts.manager !== 'apt') return { manager: facts.manager };
  const packages: Record<string, PackageState> = {};
  for (const [module, definition] of definitions) {
    if (!surveys.get(module)?.packages) continue;
    for (const spec of definition.packages) {
      const state = facts.packages[spec.name];
      if (!state) continue;
      // Absent as asked: not there (nor its configuration, purged); else installed, at its pin.
      const asWanted =
        spec.state === 'absent'
          ? state.installed === undefined && !(spec.purge && state.configurationLeft)
          : state.installed !== undefined &&
            (spec.version === undefined || spec.version === state.installed);
      if (asWanted && !packages[spec.name])
        packages[spec.name] =
          state.installed === undefined
            ? { offered: [] }
            : { installed: state.installed, offered: [] };
      else if (!asWanted) packages[spec.name] = state;
    }
  }
  return { packages, simulations: facts.simulations };
}
