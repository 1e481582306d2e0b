import type { Settings } from '../model/settings.ts';
import type { Machine, ReachMachine } from './machine.ts';

/**
 * `machinesOf`, its kinds' code (ssh's scripts, the rooted machine's safe walks) loaded
 * when a machine is first used: a command that reaches no machine (`berth status`, a
 * preview refused before its survey) does not evaluate them.
 */
export function machinesOnFirstUse(settings: Settings): ReachMachine {
  let reach: Promise<ReachMachine> | undefined;
  return (node) => {
    let machine: Promise<Machine> | undefined;
    const made = () => {
      reach ??= import('./machines-of.ts').then(({ machinesOf }) => machinesOf(settings));
      machine ??= reach.then((of) => of(node));
      return machine;
    };
    return {
      survey: async (paths, names, packages, asks) =>
        (await made()).survey(paths, names, packages, asks),
      apply: async (changes) => (await made()).apply(changes),
      install: async (pins, options) => (await made()).install(pins, options),
      refreshPackages: async (options) => (await made()).refreshPackages(options),
      unholdStarts: async () => (await made()).unholdStarts(),
      run: async (script, env, options) => (await made()).run(script, env, options),
      // A machine never used holds nothing to let go of.
      close: async () => {
        if (machine) await (await machine).close();
      },
    };
  };
}
