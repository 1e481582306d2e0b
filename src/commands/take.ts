import { fingerprintWith } from '../digest.ts';
import { describeAge, describeAgeBeyond, describeDuration } from '../duration.ts';
import { checkName } from '../names.ts';
import { type Basis, checkDigest, sealPreview } from '../preview.ts';
import { doesNotResolve, resolveModule } from '../resolve.ts';
import { mintSecret, SECRET_MODE } from '../secrets.ts';
import { flipMs } from '../settings.ts';
import {
  assignedTo,
  type Holdings,
  holdsNothing,
  managedOn,
  withAssignments,
  withManaged,
} from '../state.ts';
import {
  type CommandContext,
  type CommandFunction,
  checkNode,
  reachNode,
  refuse,
} from './context.ts';

interface TakePlan {
  data: { path: string; found: boolean }[];
  secrets: { name: string; path: string; origin: 'found' | 'mint' }[];
  /** What the act would be refused for unless the caller names the secret with --mint. */
  refusals: string[];
}

/**
 * Brings a module the machine already holds under berth, from the node's account:
 * a preview without `yes`, the act with `yes` and the preview's digest.
 */
export const take: CommandFunction = async (request, context) => {
  const { node, module } = request;
  const refusal = checkNode(context, node) ?? checkName('module', module);
  if (refusal) return refuse(refusal);

  const { stores } = context;
  const state = stores.state();
  const entry = await stores.catalog.entry(module);
  if ('problem' in entry) return refuse(doesNotResolve(module, entry.problem));
  if (module in managedOn(state, node)) return refuse(`berth already manages ${module} on ${node}`);
  const account = state.accounts[node];
  if (!account) return refuse(`no account of ${node} yet; adopt it first`);
  const holdings = account.modules[module];
  if (!holdings) {
    return refuse(
      `the account of ${node} says nothing of ${module} (it was taken before ${module} was in the catalog); adopt ${node} again`,
    );
  }

  const plan = planTake(node, module, holdings);
  const basis: Basis = {
    node,
    scope: `take ${node} ${module}`,
    assigned: assignedTo(state, node),
    managed: {},
    definitions: { [module]: entry.definition },
    survey: { [module]: holdings },
  };
  const now = context.now();
  const digest = await sealPreview(stores, 'take', plan, basis, now);
  const age = now.getTime() - Date.parse(account.takenAt);
  const flip = flipMs(stores.settings);
  const stale =
    age > flip
      ? `the account of ${node} is ${describeAgeBeyond(age, flip)} old; the flip allows ${describeDuration(flip)}; adopt ${node} again`
      : undefined;
  const nothingHeld = holdsNothing(holdings);

  if (!request.yes) {
    return {
      said: describeTakePreview(node, module, plan, { age, flip, stale, nothingHeld, digest }),
    };
  }

  if (request.digest !== undefined) {
    const changed = checkDigest(stores, request.digest, digest, basis);
    if (changed) return refuse(changed);
  } else if (!nothingHeld) {
    return refuse(
      `a take acts on a preview: preview it (berth take ${node} ${module}), then act with yes and its digest`,
    );
  }
  if (stale) return refuse(stale);
  const mintRefusal = checkMint(module, node, plan, context.mint);
  if (mintRefusal) return refuse(mintRefusal);
  const outcome = await actOnTake(
    node,
    module,
    plan,
    entry.definition.secrets,
    nothingHeld,
    context,
  );
  if (outcome.error !== undefined) return outcome;
  // Taken, it is assigned: a converge that it would block is worth saying now.
  const assigned = new Set(assignedTo(stores.state(), node));
  const resolution = await resolveModule(module, node, assigned, stores.catalog);
  if (resolution.ok) return outcome;
  return {
    said: `${outcome.said}\n${doesNotResolve(module, resolution.problem)}: converge ${node} is blocked until it does`,
  };
};

function planTake(node: string, module: string, holdings: Holdings): TakePlan {
  const dataFound = holdings.data.some((item) => item.found);
  const secrets = Object.entries(holdings.secrets).map(([name, secret]) => ({
    name,
    path: secret.path,
    origin: secret.found ? ('found' as const) : ('mint' as const),
  }));
  const refusals = dataFound
    ? secrets
        .filter((secret) => secret.origin === 'mint')
        .map((secret) => mintOverData(node, module, secret.name))
    : [];
  return { data: holdings.data, secrets, refusals };
}

function mintOverData(node: string, module: string, secret: string) {
  return `${secret} is to be minted, but ${module}'s data was found on ${node}: berth will not mint it unless named with --mint ${secret} (a command-line option)`;
}

function checkMint(module: string, node: string, plan: TakePlan, mint: readonly string[]) {
  for (const name of mint) {
    const secret = plan.secrets.find((item) => item.name === name);
    if (!secret) return `--mint names ${name}, which is not a secret of ${module}`;
    if (secret.origin === 'found')
      return `--mint names ${name}, which was found on ${node}; berth mints only what is missing`;
  }
  const dataFound = plan.data.some((item) => item.found);
  const unnamed = plan.secrets.find(
    (secret) => secret.origin === 'mint' && !mint.includes(secret.name),
  );
  if (dataFound && unnamed) return mintOverData(node, module, unnamed.name);
  return undefined;
}

function describeTakePreview(
  node: string,
  module: string,
  plan: TakePlan,
  facts: { age: number; flip: number; stale?: string; nothingHeld: boolean; digest: string },
): string {
  const lines = [
    `take ${module} on ${node}, from the account taken ${describeAge(facts.age)} ago (the flip allows ${describeDuration(facts.flip)})`,
  ];
  for (const { path, found } of plan.data)
    lines.push(`data ${path}: ${found ? 'found' : 'not found'}`);
  for (const secret of plan.secrets) {
    lines.push(
      secret.origin === 'found'
        ? `secret ${secret.name}: found on ${node} at ${secret.path}`
        : `secret ${secret.name}: to be minted by berth, at ${secret.path}`,
    );
  }
  if (facts.nothingHeld)
    lines.push(`${node} holds nothing for ${module}: nothing to compare, so yes alone is enough`);
  const refusals = facts.stale ? [facts.stale, ...plan.refusals] : plan.refusals;
  for (const refusal of refusals) lines.push(`the act would be refused: ${refusal}`);
  lines.push(`digest ${facts.digest}`);
  return lines.join('\n');
}

async function actOnTake(
  node: string,
  module: string,
  plan: TakePlan,
  secrets: Record<string, { path: string; bytes: number }>,
  nothingHeld: boolean,
  context: CommandContext,
) {
  const { stores } = context;
  const reached = await reachNode(context, node);
  if ('refusal' in reached) return refuse(reached.refusal);
  const { machine } = reached;
  const key = await stores.vault.fingerprintKey();
  const account = stores.state().accounts[node];

  // The account may be minutes old: what is read into the vault must be what it saw.
  const found = new Map<string, Uint8Array>();
  for (const secret of plan.secrets) {
    let value: Uint8Array | undefined;
    try {
      value = await machine.read(secret.path);
    } catch (error) {
      const code = (error as { code?: string }).code;
      const why =
        code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
      return refuse(
        `secret ${secret.name} of ${module} at ${secret.path} on ${node} cannot be read: ${why}`,
      );
    }
    const seen = account?.modules[module]?.secrets[secret.name]?.fingerprint;
    const now = value?.length ? await fingerprintWith(key, value) : undefined;
    if (now !== seen)
      return refuse(
        `secret ${secret.name} of ${module} changed on ${node} since the account was taken; adopt ${node} again`,
      );
    if (value && secret.origin === 'found') found.set(secret.name, value);
  }

  const at = context.now().toISOString();
  const said: string[] = [];
  try {
    for (const secret of plan.secrets) {
      if (secret.origin === 'found') {
        await stores.vault.put(node, module, secret.name, {
          value: found.get(secret.name) as Uint8Array,
          origin: `found on ${node} at ${secret.path}`,
          at,
        });
        said.push(`secret ${secret.name}: read into the vault from ${secret.path}`);
      } else {
        const value = mintSecret(secrets[secret.name]?.bytes ?? 32);
        await stores.vault.put(node, module, secret.name, { value, origin: 'minted by berth', at });
        await machine.write(secret.path, value, SECRET_MODE);
        said.push(`secret ${secret.name}: minted by berth and written to ${secret.path}`);
      }
    }
  } catch (error) {
    return refuse(
      `the take of ${module} on ${node} stopped: ${(error as Error).message}`,
      said.join('\n'),
    );
  }
  const state = stores.state();
  // What held something was installed by hand and runs; what held nothing is not
  // running, so the next converge writes its files and runs its start.
  const started = !nothingHeld;
  const managed = withManaged(state, node, module, { since: at, via: 'take', started });
  await stores.saveState(withAssignments(managed, node, [...assignedTo(state, node), module]));
  said.push(
    started
      ? `berth manages ${module} on ${node} now, and ${node} is to run it`
      : `berth manages ${module} on ${node} now, not yet started, and ${node} is to run it: converge ${node} to start it`,
  );
  return { said: said.join('\n') };
}
