import type { ModuleDefinition } from '../model/catalog.ts';
import type { Account } from '../model/state.ts';
import type { CommandFunction } from './context.ts';
import { surveyModules } from './survey.ts';

/**
 * Surveys a node's machine for every catalog module, in one survey, and records what it
 * holds, with the time: the account that a take acts on. Changes nothing on the machine.
 */
export const adopt: CommandFunction = async ({ node }, context) => {
  const { store, catalog, machine } = context;
  // Taken when the survey began: the flip window is counted from the oldest moment it saw.
  const account: Account = { takenAt: context.now().toISOString(), modules: {}, problems: {} };
  const definitions = new Map<string, ModuleDefinition>();
  for (const name of await catalog.names()) {
    const entry = await catalog.entry(name);
    if ('problem' in entry) account.problems[name] = entry.problem;
    else definitions.set(name, entry.definition);
  }
  // Opened first, found or not: the account is what a take acts on, and a take needs the
  // key; a vault berth cannot open is said now, before anything is recorded.
  const key = await store.vault.fingerprintKey();
  const surveys = await surveyModules(machine, definitions, async () => key);
  for (const [name, survey] of surveys.modules) account.modules[name] = survey.holdings;

  await store.saveRecord({ ...(await store.record()), account });
  return { result: { command: 'adopt', node, account } };
};
