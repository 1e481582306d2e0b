import { canonicalJson } from '../utils/digest.ts';
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

/**
 * What changed in a node's packages between a preview and its act, in the operator's
 * words: a package installed, upgraded or removed by hand, or lists (a mirror) that moved.
 */
export function describePackageChanges(node: string, then: unknown, now: unknown): string[] {
  const before = (then ?? { packages: {}, simulations: {} }) as PackagesBasis;
  const after = (now ?? { packages: {}, simulations: {} }) as PackagesBasis;
  const said: string[] = [];
  for (const [name, state] of Object.entries(after.packages ?? {})) {
    const was = before.packages?.[name];
    if (!was) continue;
    if (was.installed !== state.installed)
      said.push(
        state.installed === undefined
          ? `package ${name} is no longer installed on ${node} (it was ${was.installed})`
          : was.installed === undefined
            ? `package ${name} is now installed on ${node} at ${state.installed}`
            : `package ${name} on ${node} is now at ${state.installed}, not ${was.installed}`,
      );
    else if (was.candidate !== state.candidate)
      said.push(
        `${node}'s package lists now offer ${name} ${state.candidate ?? 'at no version'}, not ${was.candidate ?? 'at none'}`,
      );
    else if (canonicalJson(was.offered) !== canonicalJson(state.offered))
      said.push(
        `${node}'s package lists now offer ${name} at ${state.offered.join(', ') || 'no version'}, not ${was.offered.join(', ') || 'none'}`,
      );
  }
  if (said.length > 0) return said;
  // The same version with other bits: a repository that rebuilt it, a mirror that moved.
  for (const [module, simulation] of Object.entries(after.simulations ?? {})) {
    const was = before.simulations?.[module];
    if (!simulation.ok || !was?.ok) continue;
    for (const [archive, hashes] of Object.entries(simulation.archives ?? {})) {
      const then = was.archives?.[archive];
      if (!then || canonicalJson(then) === canonicalJson(hashes)) continue;
      const [name, version] = archive.split('=', 2);
      said.push(
        `${node}'s package lists now give ${name} ${version} other bits (SHA256 ${shortHashes(hashes)}, not ${shortHashes(then)})`,
      );
    }
  }
  if (said.length > 0) return said;
  for (const [module, simulation] of Object.entries(after.simulations ?? {})) {
    const was = before.simulations?.[module];
    if (was && canonicalJson(was) !== canonicalJson(simulation))
      said.push(`what apt would install with ${module}'s packages on ${node} changed`);
  }
  return said;
}

/** Hashes as words say them: their first 16 digits, enough to tell them apart. */
function shortHashes(hashes: readonly string[]): string {
  return hashes.length === 0 ? 'none' : hashes.map((hash) => `${hash.slice(0, 16)}…`).join(', ');
}
