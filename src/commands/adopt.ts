import type { ModuleDefinition } from '../catalog.ts';
import type { Account, Holdings } from '../state.ts';
import { holdsNothing } from '../state.ts';
import { surveyModules } from '../survey.ts';
import type { CommandFunction } from './context.ts';

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
  const surveys = await surveyModules(machine, definitions, await store.vault.fingerprintKey());
  for (const [name, survey] of surveys) account.modules[name] = survey.holdings;

  await store.saveRecord({ ...(await store.record()), account });
  return { said: describeAccount(node, account) };
};

function describeAccount(node: string, account: Account): string {
  const lines = [`account of ${node}, taken ${account.takenAt}`];
  for (const [name, holdings] of Object.entries(account.modules).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    lines.push(...describeHoldings(name, holdings));
  }
  for (const [name, problem] of Object.entries(account.problems)) {
    lines.push(`${name}: not surveyed: ${problem}`);
  }
  if (lines.length === 1)
    lines.push(`the catalog holds no modules; there was nothing to look for on ${node}`);
  return lines.join('\n');
}

function describeHoldings(module: string, holdings: Holdings): string[] {
  if (holdsNothing(holdings)) return [`${module}: holds nothing`];
  const lines = [`${module}:`];
  for (const { path, found, link } of holdings.data) {
    lines.push(`  data ${path}: ${link ?? (found ? 'found' : 'not found')}`);
  }
  for (const [name, secret] of Object.entries(holdings.secrets)) {
    const fact = secret.found ? `found, fingerprint ${short(secret.fingerprint)}` : 'not found';
    lines.push(`  secret ${name} at ${secret.path}: ${secret.link ?? fact}`);
  }
  for (const [path, file] of Object.entries(holdings.files)) {
    const fact = file.found
      ? `found, mode ${file.mode}, fingerprint ${short(file.fingerprint)}`
      : 'not found';
    lines.push(`  file ${path}: ${file.link ?? fact}`);
  }
  return lines;
}

function short(fingerprint: string | undefined) {
  return (fingerprint ?? '').slice(0, 12);
}
