import { canonicalJson } from '../digest.ts';
import type { PackageFacts, PackageState, Simulation } from './packages.ts';

/** What a preview's digest covers of a node's packages: each package's state, each module's simulation. */
export interface PackagesBasis {
  packages: Record<string, PackageState>;
  simulations: Record<string, Simulation>;
}

/**
 * The packages basis of a survey, when a module names packages: not the lists' age, which
 * moves by the second, but every version installed and offered and what apt would do.
 */
export function packagesBasis(
  surveys: ReadonlyMap<string, { packages?: PackageFacts }>,
): PackagesBasis | { manager: string } | undefined {
  const facts = [...surveys.values()].find((survey) => survey.packages)?.packages;
  if (!facts) return undefined;
  if (facts.manager !== 'apt') return { manager: facts.manager };
  return { packages: facts.packages, simulations: facts.simulations };
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
    else if (
      was.candidate !== state.candidate ||
      canonicalJson(was.offered) !== canonicalJson(state.offered)
    )
      said.push(
        `${node}'s package lists now offer ${name} ${state.candidate ?? 'at no version'}${was.candidate === state.candidate ? ` (and ${state.offered.join(', ') || 'no other'})` : `, not ${was.candidate ?? 'none'}`}`,
      );
  }
  if (said.length > 0) return said;
  for (const [module, simulation] of Object.entries(after.simulations ?? {})) {
    const was = before.simulations?.[module];
    if (was && canonicalJson(was) !== canonicalJson(simulation))
      said.push(`what apt would install with ${module}'s packages on ${node} changed`);
  }
  return said;
}
