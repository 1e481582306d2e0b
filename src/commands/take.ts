import type { NamedValue } from '../diff/secret-masks.ts';
import type { KeyRead, KeyRefused } from '../keys/key-secret.ts';
import { isKeySecretKind, TLS_DAYS } from '../keys/kinds.ts';
import type { Blocker } from '../model/blocker.ts';
import { accountNames, type ModuleDefinition, type SecretDefinition } from '../model/catalog.ts';
import { BLOCKER_CODES } from '../model/codes.ts';
import type { MachineFacts } from '../model/facts.ts';
import { isName } from '../model/names.ts';
import { inputsFor, type Readings, renderFor } from '../model/readings.ts';
import { loadEntries, resolveModule } from '../model/resolve.ts';
import { flipMs } from '../model/settings.ts';
import { type Holdings, holdsNothing, linksIn } from '../model/state.ts';
import type { PublicHalf, TemplateInputs } from '../model/template.ts';
import type { PackageFacts } from '../packages/packages.ts';
import type { PackagesBasis } from '../packages/packages-basis.ts';
import { closest } from '../utils/did-you-mean.ts';
import { digestOf, fingerprintWith } from '../utils/digest.ts';
import { once } from '../utils/once.ts';
import { ownValue } from '../utils/own-record.ts';
import { type CommandContext, type CommandFunction, refuse } from './context.ts';
import { caPlaced } from './gather-keys.ts';
import { gatherReadings, needsFacts } from './gather-readings.ts';
import { halfOf } from './key-plan.ts';
import type { Outcome } from './outcome.ts';
import { packageSteps } from './package-plan.ts';
import { type Basis, definitionDigests } from './preview-basis.ts';
import { type KeptValue, maskedAs, secretText } from './secrets.ts';
import { checkCovered, runCheck } from './steps/check.ts';
import { carryOut } from './steps/engine.ts';
import { compareFile } from './steps/file-diff.ts';
import { gate } from './steps/gate.ts';
import { Owners, SECRET_FILE_MODE } from './steps/owners.ts';
import { stepReport } from './steps/report.ts';
import type { Step } from './steps/step.ts';
import { bytesAt, type ModuleSurvey, secretHeld } from './survey.ts';
import {
  foundAsWanted,
  type Origin,
  type TakenPackage,
  type TakePlan,
  type TakeRefusal,
} from './take-plan.ts';

/**
 * The module's packages as the survey found them, or what stands in the way of looking
 * (no apt; a directory of this machine), by the converge's own blocker.
 */
function packagesFound(
  module: string,
  definition: ModuleDefinition,
  facts: PackageFacts | undefined,
): Pick<TakePlan, 'packages' | 'packagesBlocker'> {
  if (definition.packages.length === 0 || !facts) return {};
  if (facts.manager !== 'apt') {
    const [blocker] = packageSteps(module, definition, facts, false).blockers;
    return blocker ? { packagesBlocker: blocker } : {};
  }
  // A package named absent is none the module runs on: the next converge removes it.
  return {
    packages: definition.packages
      .filter((spec) => spec.state !== 'absent')
      .map((spec) => {
        const installed = facts.packages[spec.name]?.installed;
        return {
          name: spec.name,
          ...(spec.version === undefined ? {} : { pinned: spec.version }),
          ...(installed === undefined ? {} : { installed }),
        };
      }),
  };
}

/** The packages found as the module wants them, by name: version, as the record keeps them. */
function packagesRecorded(plan: TakePlan): Record<string, string> | undefined {
  if (!plan.packages) return undefined;
  const found: Record<string, string> = {};
  for (const item of plan.packages)
    if (foundAsWanted(item)) found[item.name] = item.installed as string;
  return Object.keys(found).length > 0 ? found : undefined;
}

/**
 * The module's files as the machine holds them now against what berth would write, with
 * the secrets as the take would keep them (found, else the vault's), by the one diff of
 * every plan; diffs show no value.
 */
function filesThatDiffer(
  node: string,
  definition: ModuleDefinition,
  surveyed: TakeSurvey,
  kept: ReadonlyMap<string, Uint8Array>,
  vault: readonly KeptValue[],
  read: TemplateInputs,
  keys: TakeKeys,
): NonNullable<TakePlan['files']> {
  const values: Record<string, string> = {};
  const halves: Record<string, PublicHalf> = {};
  const certs: Record<string, string> = {};
  // Every value the vault holds for the node, of any module, and the module's found ones.
  const hidden: NamedValue[] = vault.flatMap(({ secret, value }) => maskedAs(secret, value));
  for (const [name, spec] of Object.entries(definition.secrets)) {
    const held = secretHeld(surveyed.facts, spec);
    const value = held?.length ? held : kept.get(name);
    if (held?.length) hidden.push(...maskedAs(name, held));
    if (!isKeySecretKind(spec.kind)) {
      if (value) values[name] = secretText(value);
      continue;
    }
    // A key as the take keeps it: found, else the vault's.
    const key = [keys.found.get(name), keys.kept.get(name)].find(
      (item): item is KeyRead => item !== undefined && !('refused' in item),
    );
    if (!key) continue;
    values[name] = key.pem;
    halves[name] = halfOf(key);
    if (key.certificate) certs[name] = key.certificate.pem;
  }
  const inputs: TemplateInputs = {
    ...read,
    keys: halves,
    certs,
    ...(keys.ca === undefined ? {} : { ca: keys.ca }),
  };
  const differ: NonNullable<TakePlan['files']> = [];
  for (const [path, file] of Object.entries(definition.files)) {
    const fact = surveyed.facts.get(path);
    if (fact?.kind === 'link') continue; // A refusal of its own: never shown, never read.
    const { why } = compareFile(node, path, fact, file.content, { values, hidden }, inputs);
    if (why) differ.push({ path, why });
  }
  return differ;
}

/** What reads keys, loaded only for a module with a key secret (jose, PKI.js). */
const loadKeyReading = once(() => import('../keys/key-secret.ts'));

/**
 * A take's key secrets, read: each found on the machine (with its certificate), each the
 * vault keeps, each `tls` secret's names as the node renders them; and the state's CA,
 * when a file of the module places it.
 */
interface TakeKeys {
  found: ReadonlyMap<string, KeyRead | KeyRefused>;
  kept: ReadonlyMap<string, KeyRead | KeyRefused>;
  names: ReadonlyMap<string, string[]>;
  ca?: string;
}

async function takeKeys(
  module: string,
  definition: ModuleDefinition,
  surveyed: TakeSurvey,
  kept: ReadonlyMap<string, Uint8Array>,
  readings: Readings,
  context: CommandContext,
): Promise<TakeKeys> {
  const found = new Map<string, KeyRead | KeyRefused>();
  const keptRead = new Map<string, KeyRead | KeyRefused>();
  const names = new Map<string, string[]>();
  const now = context.now();
  for (const [name, spec] of Object.entries(definition.secrets)) {
    if (!isKeySecretKind(spec.kind)) continue;
    const { foundKeyValue, readKeySecret } = await loadKeyReading();
    if (spec.names)
      names.set(
        name,
        spec.names.map((text) => renderFor(text, readings, module)),
      );
    const held = secretHeld(surveyed.facts, spec);
    if (held?.length) {
      const certificate = spec.cert === undefined ? undefined : bytesAt(surveyed.facts, spec.cert);
      const value = foundKeyValue(held, certificate?.length ? certificate : undefined);
      found.set(name, await readKeySecret(value, spec.kind, now));
    }
    const value = kept.get(name);
    if (value) keptRead.set(name, await readKeySecret(value, spec.kind, now));
  }
  const ca = await caPlaced(new Map([[module, definition]]), context);
  return { found, kept: keptRead, names, ...(ca === undefined ? {} : { ca }) };
}

/**
 * What a take reads of the machine, in one survey: its secret and file paths, the accounts
 * the definition names, the packages it names, and the node's facts when the module reads
 * them (`told`).
 */
type TakeSurvey = Pick<ModuleSurvey, 'facts' | 'accounts' | 'packages'> & {
  told?: MachineFacts;
};

async function surveyForTake(
  module: string,
  definition: ModuleDefinition,
  context: CommandContext,
): Promise<TakeSurvey> {
  const paths = new Set([
    ...Object.values(definition.secrets).flatMap((spec) =>
      spec.cert === undefined ? [spec.path] : [spec.path, spec.cert],
    ),
    ...Object.keys(definition.files),
  ]);
  const withFacts = needsFacts(definition);
  const facts = await context.machine.survey(
    [...paths].map((path) => ({ path, read: true })),
    accountNames(definition),
    definition.packages.length > 0 ? [{ module, packages: definition.packages }] : undefined,
    ...(withFacts ? [{ facts: true }] : []),
  );
  const accounts = facts.accounts ?? { users: new Map(), groups: new Map() };
  return {
    facts,
    accounts,
    ...(facts.packages ? { packages: facts.packages } : {}),
    ...(withFacts ? { told: facts.facts ?? {} } : {}),
  };
}

/**
 * Brings a module the machine already holds under berth, from the node's account:
 * a preview without `yes`, the act with `yes` and the preview's digest.
 */
export const take: CommandFunction = async (request, context) => {
  const { node, module } = request;
  if (!isName(module))
    return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: module });

  const { store, catalog } = context;
  const record = await store.record();
  const entry = await catalog.entry(module);
  if ('problem' in entry) {
    const meant = entry.missing ? closest(module, await catalog.names()) : undefined;
    return refuse({
      kind: 'module-entry',
      code: entry.missing ? 'unknown_module' : 'invalid_module',
      module,
      node,
      problem: entry.problem,
      ...(meant === undefined ? {} : { meant }),
    });
  }
  if (Object.hasOwn(record.managed, module))
    return refuse({ kind: 'already-managed', code: 'already_managed', module, node });
  const account = record.account;
  if (!account) return refuse({ kind: 'not-adopted', code: 'not_adopted', node });
  const holdings = ownValue(account.modules, module);
  if (!holdings) return refuse({ kind: 'not-in-account', code: 'not_in_account', module, node });

  const kept = new Map<string, Uint8Array>();
  for (const name of Object.keys(entry.definition.secrets)) {
    const value = (await store.vault.get(module, name))?.value;
    if (value) kept.set(name, value);
  }
  // One survey for the preview and the act alike: what differs, who owns, what is held now.
  const surveyed = await surveyForTake(module, entry.definition, context);
  const read = await gatherReadings(
    context.settings,
    node,
    catalog,
    new Map([[module, entry.definition]]),
    surveyed.told,
  );
  const keys = await takeKeys(module, entry.definition, surveyed, kept, read.readings, context);
  const plan = planTake(
    module,
    holdings,
    entry.definition.secrets,
    kept,
    context.line.mint ?? [],
    surveyed,
    keys,
  );
  plan.refusals.push(...(read.blockers.get(module) ?? []), ...read.undeclared);
  Object.assign(plan, packagesFound(module, entry.definition, surveyed.packages));
  // Every value of the node, opened: to clear a check's output and mask a diff.
  const vault = holdsNothing(holdings) ? [] : await store.vault.all();
  // What the machine holds may not run: a failing check takes it as not started.
  const check =
    entry.definition.check && !holdsNothing(holdings)
      ? await runCheck(
          node,
          module,
          { script: entry.definition.check, timeout: entry.definition.timeout },
          vault,
          context,
          read.readings,
        )
      : undefined;
  if (check) plan.check = check;
  if (!holdsNothing(holdings))
    plan.files = filesThatDiffer(
      node,
      entry.definition,
      surveyed,
      kept,
      vault,
      inputsFor(read.readings, module),
      keys,
    );
  const basis: Basis = {
    node,
    scope: { command: 'take', module },
    assigned: record.assigned,
    managed: {},
    definitions: await definitionDigests({ [module]: entry.definition }),
    survey: { [module]: holdings },
    // The files as the machine holds them now, not as the account saw them: a refused act
    // can then say which of them changed since the preview.
    held: { [module]: { files: await filesHeld(plan.files ?? []) } },
    ...(check ? { checks: { [module]: checkCovered(check) } } : {}),
    // A package installed or removed by hand after the preview refuses the act, naming it.
    ...(plan.packages ? { packages: takenBasis(plan.packages) } : {}),
    ...readingsBasis(module, read.readings, surveyed.told !== undefined),
  };
  const nothingHeld = holdsNothing(holdings);
  const covered = check ? { ...plan, check: checkCovered(check) } : plan;
  const gated = await gate(request, context, {
    kind: 'take',
    plan: covered,
    basis,
    yesAlone: nothingHeld,
  });
  const age = context.now().getTime() - Date.parse(account.takenAt);
  const flip = flipMs(context.settings);
  const refusals: TakeRefusal[] = [
    ...(age > flip ? [{ because: 'account-stale' as const, node, age, flip }] : []),
    ...plan.refusals,
  ];
  const report = {
    digest: gated.digest,
    steps: takeSteps(module, plan).map(stepReport),
    blockers: refusals.map((refusal): Blocker => ({ ...refusal, module })),
  };

  if (gated.to === 'preview') {
    const { digest, blockers } = report;
    const preview = { plan, age, flip, nothingHeld, digest, blockers };
    return { result: { command: 'take', node, module, preview }, report };
  }
  if (gated.to === 'refused') return { refusal: gated.refusal, report };
  const [blocker] = report.blockers;
  if (blocker) {
    const code = BLOCKER_CODES[blocker.because];
    return { refusal: { kind: 'blocker', code, node, blocker }, report };
  }
  const outcome = await actOnTake(node, module, plan, holdings, gated.digest, surveyed, context);
  if (outcome.refusal !== undefined) return outcome;
  // Taken, it is assigned: a converge that it would block is worth saying now.
  const assigned = new Set((await store.record()).assigned);
  const resolution = resolveModule(module, assigned, await loadEntries(catalog, [module]));
  if (resolution.ok || outcome.result?.command !== 'take' || !('act' in outcome.result))
    return outcome;
  const act = { ...outcome.result.act, blocksConverge: resolution.unresolved };
  return { ...outcome, result: { ...outcome.result, act } };
};

/** The values and facts a take's plan read, as its basis covers them. */
function readingsBasis(
  module: string,
  readings: Readings,
  factsRead: boolean,
): Pick<Basis, 'values' | 'facts'> {
  const values = readings.values.get(module) ?? {};
  return {
    ...(Object.keys(values).length > 0 ? { values: { [module]: values } } : {}),
    ...(factsRead ? { facts: readings.facts } : {}),
  };
}

/** The packages found, as a preview's basis has them: installed versions, nothing offered. */
function takenBasis(packages: readonly TakenPackage[]): PackagesBasis {
  const states: PackagesBasis['packages'] = {};
  for (const item of packages)
    states[item.name] = {
      ...(item.installed === undefined ? {} : { installed: item.installed }),
      offered: [],
    };
  return { packages: states, simulations: {} };
}

/** Each file that differs, by path: why, its diff told by a digest (a diff may be long). */
async function filesHeld(files: NonNullable<TakePlan['files']>): Promise<Record<string, string>> {
  const held: Record<string, string> = {};
  for (const { path, why } of files) held[path] = await digestOf(why);
  return held;
}

/**
 * A take as the engine's steps: found secrets kept (their fingerprint as the account saw
 * it), then each other secret restored from the vault or minted, then berth manages the
 * module, started when what the machine holds runs.
 */
function takeSteps(
  module: string,
  plan: TakePlan,
  fingerprints: ReadonlyMap<string, { key?: string; certificate?: string }> = new Map(),
  started = false,
): Step[] {
  const keeps: Step[] = [];
  const writes: Step[] = [];
  for (const secret of plan.secrets) {
    const { name, path, key } = secret;
    const certificate = key?.certificate;
    if (secret.origin === 'found') {
      const { key: fingerprint, certificate: certified } = fingerprints.get(name) ?? {};
      keeps.push({
        do: 'keep',
        module,
        secret: name,
        path,
        ...(secret.match === undefined ? {} : { match: secret.match }),
        ...(fingerprint === undefined ? {} : { fingerprint }),
        ...(key ? { kind: key.kind } : {}),
        ...(certificate
          ? {
              certificate: {
                path: certificate.path,
                ...(certified === undefined ? {} : { fingerprint: certified }),
              },
            }
          : {}),
      });
      continue;
    }
    const attributes = {
      ...(secret.attributes ?? { mode: SECRET_FILE_MODE }),
      ...(secret.match === undefined ? {} : { inside: true as const }),
    };
    writes.push(
      secret.origin === 'vault'
        ? {
            do: 'restore',
            module,
            secret: name,
            path,
            ...attributes,
            ...(certificate ? { certificate } : {}),
          }
        : {
            do: 'mint',
            module,
            secret: name,
            path,
            bytes: secret.bytes,
            ...attributes,
            ...(key ? { key: { kind: key.kind, ...(certificate ? { certificate } : {}) } } : {}),
          },
    );
  }
  const packages = packagesRecorded(plan);
  return [
    ...keeps,
    ...writes,
    { do: 'manage', module, started, via: 'take', ...(packages ? { packages } : {}) },
  ];
}

/**
 * A key secret as a take keeps it: found (read as a key of its kind, with a `tls`
 * secret's certificate for it, else a refusal), restored from the vault, or minted.
 */
function keyOfTake(
  name: string,
  spec: SecretDefinition,
  origin: Origin,
  owners: Owners,
  keys: TakeKeys,
  refusals: TakeRefusal[],
): TakePlan['secrets'][number]['key'] {
  const { kind } = spec;
  if (!isKeySecretKind(kind)) return undefined;
  const certificate =
    kind === 'tls' && spec.cert !== undefined
      ? {
          path: spec.cert,
          names: keys.names.get(name) ?? [],
          days: spec.days ?? TLS_DAYS,
          attributes: owners.file(spec.cert, { owner: spec.owner, group: spec.group }, '0644'),
        }
      : undefined;
  const withCertificate = certificate ? { certificate } : {};
  const found = origin === 'found' ? keys.found.get(name) : undefined;
  if (!found) return { kind, ...withCertificate };
  if ('refused' in found) {
    const { words } = found.refused;
    refusals.push(
      found.refused.kid !== undefined
        ? { because: 'certificate-refused', secret: name, path: spec.path, words }
        : { because: 'not-a-key', secret: name, path: spec.path, kind, words },
    );
    return { kind };
  }
  return { kind, found: { keyKind: found.keyKind, kid: found.kid }, ...withCertificate };
}

/**
 * Each secret's origin: found on the machine; kept in the vault (managed here before,
 * then wiped by hand: restored, never minted over the vault's only copy); or to be
 * minted, which over found data only `--mint NAME` allows.
 */
function planTake(
  module: string,
  holdings: Holdings,
  specs: Record<string, SecretDefinition>,
  kept: ReadonlyMap<string, Uint8Array>,
  mint: readonly string[],
  surveyed: TakeSurvey,
  keys: TakeKeys,
): TakePlan {
  // A secret file berth writes gets the owner its definition names, by the one owner
  // lookup of every plan: a name the machine does not know refuses the take.
  const owners = new Owners(module, surveyed);
  // A path berth will not follow refuses the take as a whole: nothing is read through it.
  const refusals: TakeRefusal[] = linksIn(holdings).map(({ path, words }) => ({
    because: 'link',
    path,
    words,
  }));
  const secrets = Object.entries(holdings.secrets).map(([name, secret]) => {
    const spec = ownValue(specs, name);
    const origin: Origin = secret.found ? 'found' : kept.has(name) ? 'vault' : 'mint';
    const written = origin !== 'found' && spec?.match === undefined;
    const key = spec && keyOfTake(name, spec, origin, owners, keys, refusals);
    return {
      name,
      path: secret.path,
      origin,
      bytes: spec?.bytes ?? 32,
      ...(spec?.match === undefined ? {} : { match: spec.match }),
      ...(written && spec ? { attributes: owners.secretFile(secret.path, spec) } : {}),
      ...(key ? { key } : {}),
      owner: spec?.owner,
      group: spec?.group,
      mode: spec?.mode,
    };
  });
  for (const name of mint) {
    const secret = secrets.find((item) => item.name === name);
    if (!secret) refusals.push({ because: 'mint-not-a-secret', secret: name });
    else if (secret.origin === 'found') refusals.push({ because: 'mint-found', secret: name });
    else if (secret.origin === 'vault') refusals.push({ because: 'mint-kept', secret: name });
  }
  if (holdings.data.some((item) => item.found)) {
    for (const secret of secrets) {
      if (secret.origin === 'mint' && !mint.includes(secret.name))
        refusals.push({ because: 'mint-over-data', secret: secret.name });
    }
  }
  refusals.push(...owners.blockers);
  return { data: holdings.data, secrets, mint: [...mint].sort(), refusals };
}

async function actOnTake(
  node: string,
  module: string,
  plan: TakePlan,
  holdings: Holdings,
  digest: string,
  surveyed: TakeSurvey,
  context: CommandContext,
): Promise<Outcome> {
  const nothingHeld = holdsNothing(holdings);
  const key = await context.store.vault.fingerprintKey();
  // The account may be minutes old: what is read into the vault must be what it saw.
  const fingerprints = new Map<string, { key?: string; certificate?: string }>();
  for (const secret of plan.secrets) {
    const fact = surveyed.facts.get(secret.path);
    const why =
      fact?.kind === 'unreadable'
        ? { reason: fact.reason }
        : fact?.kind === 'directory' || fact?.kind === 'other'
          ? fact.kind
          : undefined;
    if (why)
      return refuse({
        kind: 'secret-unreadable',
        code: 'secret_unreadable',
        secret: secret.name,
        module,
        node,
        path: secret.path,
        why,
      });
    const value = secretHeld(surveyed.facts, secret);
    const now = value?.length ? await fingerprintWith(key, value) : undefined;
    // A tls secret's certificate, found beside its key, is what the account saw too.
    const certificatePath = secret.key?.certificate?.path;
    const certificate =
      certificatePath === undefined ? undefined : bytesAt(surveyed.facts, certificatePath);
    const certified =
      value?.length && certificate?.length ? await fingerprintWith(key, certificate) : undefined;
    const seen = ownValue(holdings.secrets, secret.name);
    if (now !== seen?.fingerprint || certified !== seen?.certificate)
      return refuse({
        kind: 'secret-changed',
        code: 'account_stale',
        secret: secret.name,
        module,
        node,
      });
    fingerprints.set(secret.name, { key: now, certificate: certified });
  }

  // What held something was installed by hand and runs; what held nothing is not
  // running, so the next converge writes its files and runs its start.
  const started = !nothingHeld && (plan.check === undefined || plan.check.code === 0);
  const steps = takeSteps(module, plan, fingerprints, started);
  const carried = await carryOut([{ module, steps }], node, context, 'take');
  const report = { digest, steps: carried.told.map(({ step }) => stepReport(step)), blockers: [] };
  const act = { told: carried.told, stopped: carried.failure !== undefined };
  const result = { command: 'take', node, module, act } as const;
  if (!carried.failure) return { result, report };
  const { code, how, why } = carried.failure;
  const refusal = { kind: 'stopped', code, command: 'take', node, module, how, why } as const;
  return { result, refusal, report: { ...report, failed: true } };
}
