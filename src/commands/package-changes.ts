import type { Change } from '../model/change.ts';
import type { PackagesBasis } from '../packages/packages-basis.ts';
import { canonicalJson } from '../utils/digest.ts';

/**
 * What changed in a node's packages between a preview and its act: a package installed,
 * upgraded or removed by hand, or lists (a mirror) that moved. The first of these that
 * tells something is told: a version, then the bits of a version, then what apt would do.
 */
export function packageChanges(then: unknown, now: unknown): Change[] {
  const before = (then ?? { packages: {}, simulations: {} }) as PackagesBasis;
  const after = (now ?? { packages: {}, simulations: {} }) as PackagesBasis;
  const said: Change[] = [];
  for (const [name, state] of Object.entries(after.packages ?? {})) {
    const was = before.packages?.[name];
    if (!was) continue;
    if (was.installed !== state.installed)
      said.push(
        state.installed === undefined
          ? { kind: 'package-removed', package: name, was: String(was.installed) }
          : was.installed === undefined
            ? { kind: 'package-installed', package: name, version: state.installed }
            : { kind: 'package-version', package: name, was: was.installed, is: state.installed },
      );
    else if (was.candidate !== state.candidate)
      said.push({
        kind: 'package-candidate',
        package: name,
        ...(was.candidate === undefined ? {} : { was: was.candidate }),
        ...(state.candidate === undefined ? {} : { is: state.candidate }),
      });
    else if (canonicalJson(was.offered) !== canonicalJson(state.offered))
      said.push({ kind: 'package-offered', package: name, was: was.offered, is: state.offered });
  }
  if (said.length > 0) return said;
  // The same version with other bits: a repository that rebuilt it, a mirror that moved.
  for (const [module, simulation] of Object.entries(after.simulations ?? {})) {
    const was = before.simulations?.[module];
    if (!simulation.ok || !was?.ok) continue;
    for (const [archive, hashes] of Object.entries(simulation.archives ?? {})) {
      const then = was.archives?.[archive];
      if (!then || canonicalJson(then) === canonicalJson(hashes)) continue;
      const [name = '', version = ''] = archive.split('=', 2);
      said.push({ kind: 'package-bits', package: name, version, was: then, is: hashes });
    }
  }
  if (said.length > 0) return said;
  for (const [module, simulation] of Object.entries(after.simulations ?? {})) {
    const was = before.simulations?.[module];
    if (was && canonicalJson(was) !== canonicalJson(simulation))
      said.push({ kind: 'package-simulation', module });
  }
  return said;
}
