import { type ModuleDefinition, type Ownership, renderFile } from '../catalog.ts';
import { didYouMean } from '../did-you-mean.ts';
import { hideSecrets, unifiedDiff } from '../diff.ts';
import { shownDiff } from '../diff-shown.ts';
import { fingerprintWith } from '../digest.ts';
import { describeAge, describeAgeBeyond, describeDuration } from '../duration.ts';
import type { WriteOptions } from '../machines/machine.ts';
import { checkName } from '../names.ts';
import { type Basis, checkDigest, sealPreview } from '../preview.ts';
import { doesNotResolve, loadEntries, resolveModule } from '../resolve.ts';
import { mintSecret, SECRET_MODE, secretText } from '../secrets.ts';
import { flipMs } from '../settings.ts';
import { type Holdings, holdsNothing, linksIn, withAssigned, withManaged } from '../state.ts';
import { type KeptSecret, StoreError } from '../stores/stores.ts';
import { secretHeld } from '../survey.ts';
import { type CommandContext, type CommandFunction, refuse } from './context.ts';
import { applyReady, type Ready, runCheck } from './converge.ts';
import type { CheckOutcome } from './converge-plan.ts';

/** Where a secret comes from when a module is taken. */
type Origin = 'found' | 'vault' | 'mint';

interface TakePlan {
  data: { path: string; found: boolean }[];
  secrets: ({
    name: string;
    path: string;
    origin: Origin;
    bytes: number;
    /** A secret inside its file: read out with this expression; placed by the file's write. */
    match?: string;
  } & Ownership)[];
  /** The secrets `--mint` names: the preview shows what the act with the same options does. */
  mint: string[];
  /** What the act would be refused for, in words. */
  refusals: string[];
  /** What the module's check said, when it has one and the machine holds something. */
  check?: CheckOutcome;
  /** The files that differ from what berth would write (the next converge rewrites them). */
  files?: { path: string; missing: boolean; diff: string[] }[];
}

/**
 * The module's files as the machine holds them now against what berth would write, with
 * the secrets as the take would keep them (found, else the vault's); diffs show no value.
 */
async function filesThatDiffer(
  node: string,
  module: string,
  definition: ModuleDefinition,
  context: CommandContext,
): Promise<NonNullable<TakePlan['files']>> {
  const paths = new Set([
    ...Object.keys(definition.files),
    ...Object.values(definition.secrets).map((spec) => spec.path),
  ]);
  const facts = await context.machine.survey([...paths].map((path) => ({ path, read: true })));
  const values: Record<string, string> = {};
  const placeholders: Record<string, string> = {};
  const hidden: [string, string][] = [];
  for (const [name, spec] of Object.entries(definition.secrets)) {
    placeholders[name] = `[secret ${name}]`;
    const held = secretHeld(facts, spec);
    const kept = (await context.store.vault.get(module, name))?.value;
    const value = held?.length ? held : kept;
    if (value) values[name] = secretText(value);
    for (const each of [held, kept]) if (each?.length) hidden.push([name, secretText(each)]);
  }
  const differ: NonNullable<TakePlan['files']> = [];
  for (const [path, file] of Object.entries(definition.files)) {
    const fact = facts.get(path);
    if (fact?.kind === 'link') continue; // A refusal of its own: never shown, never read.
    if (fact?.kind !== 'file') {
      differ.push({ path, missing: true, diff: [] });
      continue;
    }
    const wanted = renderFile(file.content, values);
    const held = fact.bytes ? new TextDecoder().decode(fact.bytes) : undefined;
    if (held === wanted) continue;
    differ.push({
      path,
      missing: false,
      diff:
        held !== undefined
          ? unifiedDiff(hideSecrets(held, hidden), renderFile(file.content, placeholders), {
              held: `${path} on ${node}`,
              wanted: `${path} as berth writes it`,
            })
          : [`(over ${fact.size} bytes: too long to read)`],
    });
  }
  return differ;
}

/**
 * Brings a module the machine already holds under berth, from the node's account:
 * a preview without `yes`, the act with `yes` and the preview's digest.
 */
export const take: CommandFunction = async (request, context) => {
  const { node, module } = request;
  const refusal = checkName('module', module);
  if (refusal) return refuse(refusal);

  const { store, catalog } = context;
  const record = await store.record();
  const entry = await catalog.entry(module);
  if ('problem' in entry) {
    const hint = entry.missing ? didYouMean(module, await catalog.names()) : '';
    return refuse(
      `${doesNotResolve(module, node, { why: 'not-valid', problem: entry.problem })}${hint}`,
    );
  }
  if (module in record.managed) return refuse(`berth already manages ${module} on ${node}`);
  const account = record.account;
  if (!account) return refuse(`no account of ${node} yet; adopt it first`);
  const holdings = account.modules[module];
  if (!holdings) {
    return refuse(
      `the account of ${node} says nothing of ${module} (it was taken before ${module} was in the catalog); adopt ${node} again`,
    );
  }

  const kept = new Set<string>();
  for (const name of Object.keys(holdings.secrets))
    if (await store.vault.get(module, name)) kept.add(name);
  const plan = planTake(node, module, holdings, entry.definition.secrets, kept, context.mint);
  // What the machine holds may not run: a failing check takes it as not started.
  const check =
    entry.definition.check && !holdsNothing(holdings)
      ? await runCheck(node, module, entry.definition.check, await store.vault.all(), context)
      : undefined;
  if (check) plan.check = check;
  if (!holdsNothing(holdings))
    plan.files = await filesThatDiffer(node, module, entry.definition, context);
  const basis: Basis = {
    node,
    scope: `take ${node} ${module}`,
    assigned: record.assigned,
    managed: {},
    definitions: { [module]: entry.definition },
    survey: { [module]: holdings },
    ...(check ? { checks: { [module]: check } } : {}),
  };
  const now = context.now();
  const digest = await sealPreview(store, 'take', plan, basis, now);
  const age = now.getTime() - Date.parse(account.takenAt);
  const flip = flipMs(context.settings);
  const stale =
    age > flip
      ? `the account of ${node} is ${describeAgeBeyond(age, flip)} old; the flip allows ${describeDuration(flip)}; adopt ${node} again`
      : undefined;
  const nothingHeld = holdsNothing(holdings);

  if (!request.yes) {
    return {
      said: describeTakePreview(node, module, plan, {
        age,
        flip,
        stale,
        nothingHeld,
        digest,
        fullDiff: context.fullDiff ?? false,
      }),
    };
  }

  if (request.digest !== undefined) {
    const changed = await checkDigest(store, request.digest, digest, basis);
    if (changed) return refuse(changed);
  } else if (!nothingHeld) {
    return refuse(
      `a take acts on a preview: preview it (berth take ${node} ${module}), then act with yes and its digest`,
    );
  }
  if (stale) return refuse(stale);
  const [firstRefusal] = plan.refusals;
  if (firstRefusal) return refuse(firstRefusal);
  const outcome = await actOnTake(node, module, plan, holdings, nothingHeld, context);
  if (outcome.error !== undefined) return outcome;
  // Taken, it is assigned: a converge that it would block is worth saying now.
  const assigned = new Set((await store.record()).assigned);
  const resolution = resolveModule(module, assigned, await loadEntries(catalog, [module]));
  if (resolution.ok) return outcome;
  return {
    said: `${outcome.said}\n${doesNotResolve(module, node, resolution.unresolved)}: converge ${node} is blocked until it does`,
  };
};

/**
 * Each secret's origin: found on the machine; kept in the vault (managed here before,
 * then wiped by hand: restored, never minted over the vault's only copy); or to be
 * minted, which over found data only `--mint NAME` allows.
 */
function planTake(
  node: string,
  module: string,
  holdings: Holdings,
  specs: Record<string, { bytes: number; match?: string } & Ownership>,
  kept: ReadonlySet<string>,
  mint: readonly string[],
): TakePlan {
  const secrets = Object.entries(holdings.secrets).map(([name, secret]) => ({
    name,
    path: secret.path,
    origin: (secret.found ? 'found' : kept.has(name) ? 'vault' : 'mint') as Origin,
    bytes: specs[name]?.bytes ?? 32,
    ...(specs[name]?.match === undefined ? {} : { match: specs[name]?.match }),
    owner: specs[name]?.owner,
    group: specs[name]?.group,
    mode: specs[name]?.mode,
  }));
  // A path berth will not follow refuses the take as a whole: nothing is read through it.
  const refusals: string[] = linksIn(holdings).map(({ words }) => words);
  for (const name of mint) {
    const secret = secrets.find((item) => item.name === name);
    if (!secret) refusals.push(`--mint names ${name}, which is not a secret of ${module}`);
    else if (secret.origin === 'found')
      refusals.push(
        `--mint names ${name}, which was found on ${node}; berth mints only what is missing`,
      );
    else if (secret.origin === 'vault')
      refusals.push(
        `--mint names ${name}, which berth's vault keeps; berth restores it rather than mint over it`,
      );
  }
  if (holdings.data.some((item) => item.found)) {
    for (const secret of secrets) {
      if (secret.origin === 'mint' && !mint.includes(secret.name))
        refusals.push(
          `${secret.name} is to be minted, but ${module}'s data was found on ${node}: berth will not mint it unless named with --mint ${secret.name} (a command-line option)`,
        );
    }
  }
  return { data: holdings.data, secrets, mint: [...mint].sort(), refusals };
}

function describeTakePreview(
  node: string,
  module: string,
  plan: TakePlan,
  facts: {
    age: number;
    flip: number;
    stale?: string;
    nothingHeld: boolean;
    digest: string;
    fullDiff: boolean;
  },
): string {
  const lines = [
    `take ${module} on ${node}, from the account taken ${describeAge(facts.age)} ago (the flip allows ${describeDuration(facts.flip)})`,
  ];
  for (const { path, found } of plan.data)
    lines.push(`data ${path}: ${found ? 'found' : 'not found'}`);
  for (const secret of plan.secrets) {
    const origin =
      secret.origin === 'found'
        ? `found on ${node} ${secret.match === undefined ? 'at' : 'inside'} ${secret.path}`
        : secret.origin === 'vault'
          ? `kept in the vault: restored to ${secret.path}`
          : `to be minted by berth, at ${secret.path}`;
    lines.push(`secret ${secret.name}: ${origin}`);
  }
  if (plan.check)
    lines.push(
      plan.check.code === 0
        ? `check: passes, so ${module} is taken as running`
        : `check: fails (exit ${plan.check.code}${plan.check.last ? `: ${plan.check.last}` : ''}), so ${module} is taken as not started: the next converge runs its start`,
    );
  for (const file of plan.files ?? []) {
    lines.push(
      file.missing
        ? `file ${file.path}: missing on ${node}; the next converge writes it`
        : `file ${file.path}: differs from what berth writes; the next converge rewrites it`,
    );
    for (const line of shownDiff(file.diff, facts.fullDiff)) lines.push(`    ${line}`);
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
  holdings: Holdings,
  nothingHeld: boolean,
  context: CommandContext,
) {
  const { store, machine } = context;
  const key = await store.vault.fingerprintKey();

  // The account may be minutes old: what is read into the vault must be what it saw.
  const named = (pick: (secret: Ownership) => string | number | undefined) => [
    ...new Set(plan.secrets.map(pick).filter((name): name is string => typeof name === 'string')),
  ];
  const facts = await machine.survey(
    plan.secrets.map(({ path }) => ({ path, read: true })),
    { users: named((secret) => secret.owner), groups: named((secret) => secret.group) },
  );
  // A secret file berth writes gets the owner its definition names: a name the machine
  // does not know is refused before anything is written.
  const writeOptions = new Map<string, WriteOptions>();
  for (const secret of plan.secrets) {
    const id = (kind: 'user' | 'group', account: string | number | undefined) => {
      if (account === undefined || typeof account === 'number') return account;
      return (kind === 'user' ? facts.accounts?.users : facts.accounts?.groups)?.get(account);
    };
    const uid = id('user', secret.owner);
    const gid = id('group', secret.group);
    const writes = secret.origin !== 'found' && secret.match === undefined;
    if (writes && secret.owner !== undefined && uid === undefined)
      return refuse(
        `${module} names owner ${secret.owner} for ${secret.path}, but ${node} has no user ${secret.owner}`,
      );
    if (writes && secret.group !== undefined && gid === undefined)
      return refuse(
        `${module} names group ${secret.group} for ${secret.path}, but ${node} has no group ${secret.group}`,
      );
    writeOptions.set(secret.name, {
      mode: secret.mode === undefined ? SECRET_MODE : Number.parseInt(secret.mode, 8),
      ...(uid === undefined ? {} : { uid }),
      ...(gid === undefined ? {} : { gid }),
    });
  }
  const found = new Map<string, Uint8Array>();
  for (const secret of plan.secrets) {
    const fact = facts.get(secret.path);
    const unreadable =
      fact?.kind === 'unreadable'
        ? fact.reason
        : fact?.kind === 'directory'
          ? 'it is a directory, not a file'
          : fact?.kind === 'other'
            ? 'it is not a file'
            : undefined;
    if (unreadable)
      return refuse(
        `secret ${secret.name} of ${module} at ${secret.path} on ${node} cannot be read: ${unreadable}`,
      );
    const value = secretHeld(facts, secret);
    const now = value?.length ? await fingerprintWith(key, value) : undefined;
    if (now !== holdings.secrets[secret.name]?.fingerprint)
      return refuse(
        `secret ${secret.name} of ${module} changed on ${node} since the account was taken; adopt ${node} again`,
      );
    if (value && secret.origin === 'found') found.set(secret.name, value);
  }

  const at = context.now().toISOString();
  const said: string[] = [];
  // Every secret into the vault first, in one write; then the files berth writes, in one batch.
  const ready: Ready[] = [];
  const toKeep: KeptSecret[] = [];
  let unready: unknown;
  try {
    for (const secret of plan.secrets) {
      const options = writeOptions.get(secret.name) as WriteOptions;
      if (secret.origin === 'found') {
        toKeep.push({
          module,
          secret: secret.name,
          entry: {
            value: found.get(secret.name) as Uint8Array,
            origin: `found on ${node} at ${secret.path}`,
            at,
          },
        });
        ready.push({ done: `secret ${secret.name}: read into the vault from ${secret.path}` });
      } else if (secret.origin === 'vault') {
        const kept = await store.vault.get(module, secret.name);
        if (!kept) throw new Error(`the vault no longer holds ${secret.name}`);
        ready.push(
          secret.match === undefined
            ? {
                change: { kind: 'file', path: secret.path, data: kept.value, options },
                done: `secret ${secret.name}: restored from the vault to ${secret.path}`,
              }
            : {
                done: `secret ${secret.name}: kept in the vault; the next converge places it in ${secret.path}`,
              },
        );
      } else {
        const value = mintSecret(secret.bytes);
        toKeep.push({
          module,
          secret: secret.name,
          entry: { value, origin: 'minted by berth', at },
        });
        ready.push(
          secret.match === undefined
            ? {
                change: { kind: 'file', path: secret.path, data: value, options },
                done: `secret ${secret.name}: minted by berth and written to ${secret.path}`,
              }
            : {
                done: `secret ${secret.name}: minted by berth; the next converge places it in ${secret.path}`,
              },
        );
      }
    }
  } catch (error) {
    if (error instanceof StoreError) throw error;
    unready = error;
  }
  if (toKeep.length > 0) await store.vault.put(...toKeep);
  try {
    await applyReady(machine, ready, (done) => said.push(done));
    if (unready !== undefined) throw unready;
  } catch (error) {
    return refuse(
      `the take of ${module} on ${node} stopped: ${(error as Error).message}`,
      said.join('\n'),
    );
  }
  const record = await store.record();
  // What held something was installed by hand and runs; what held nothing is not
  // running, so the next converge writes its files and runs its start.
  const started = !nothingHeld && (plan.check === undefined || plan.check.code === 0);
  const managed = withManaged(record, module, { since: at, via: 'take', started });
  await store.saveRecord(withAssigned(managed, [...record.assigned, module]));
  said.push(
    started
      ? `berth manages ${module} on ${node} now, and ${node} is to run it`
      : `berth manages ${module} on ${node} now, not yet started, and ${node} is to run it: converge ${node} to start it`,
  );
  return { said: said.join('\n') };
}
