import { type Account, type Holdings, holdsNothing } from '../state.ts';
import { surveyModule } from '../survey.ts';
import { type CommandFunction, checkNode, reachNode, refuse } from './context.ts';

/**
 * Surveys a node's machine for every catalog module and records what it holds,
 * with the time: the account that a take acts on. Changes nothing on the machine.
 */
export const adopt: CommandFunction = async ({ node }, context) => {
  const refusal = checkNode(context, node);
  if (refusal) return refuse(refusal);

  const { stores } = context;
  const reached = await reachNode(context, node);
  if ('refusal' in reached) return refuse(reached.refusal);
  const { machine } = reached;

  const key = await stores.vault.fingerprintKey();
  const account: Account = { takenAt: context.now().toISOString(), modules: {}, problems: {} };
  for (const name of await stores.catalog.names()) {
    const entry = await stores.catalog.entry(name);
    if ('problem' in entry) {
      account.problems[name] = entry.problem;
      continue;
    }
    try {
      account.modules[name] = await surveyModule(machine, entry.definition, key);
    } catch (error) {
      return refuse(`${node} cannot be surveyed for ${name}: ${(error as Error).message}`);
    }
  }

  const state = stores.state();
  await stores.saveState({ ...state, accounts: { ...state.accounts, [node]: account } });
  return { said: describeAccount(node, account) };
};

function describeAccount(node: string, account: Account): string {
  const lines = [`account of ${node}, taken ${account.takenAt}`];
  for (const [name, holdings] of Object.entries(account.modules)) {
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
  for (const { path, found } of holdings.data) {
    lines.push(`  data ${path}: ${found ? 'found' : 'not found'}`);
  }
  for (const [name, secret] of Object.entries(holdings.secrets)) {
    const fact = secret.found ? `found, fingerprint ${short(secret.fingerprint)}` : 'not found';
    lines.push(`  secret ${name} at ${secret.path}: ${fact}`);
  }
  for (const [path, file] of Object.entries(holdings.files)) {
    const fact = file.found
      ? `found, mode ${file.mode}, fingerprint ${short(file.fingerprint)}`
      : 'not found';
    lines.push(`  file ${path}: ${fact}`);
  }
  return lines;
}

function short(fingerprint: string | undefined) {
  return (fingerprint ?? '').slice(0, 12);
}
