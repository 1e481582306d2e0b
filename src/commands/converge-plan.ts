import type { NamedValue } from '../diff/secret-masks.ts';
import { isKeySecretKind, type KeySecretKind } from '../keys/kinds.ts';
import {
  type ModuleDefinition,
  SECRET_PLACEHOLDER,
  type SecretDefinition,
} from '../model/catalog.ts';
import { inputsFor } from '../model/readings.ts';
import { type Entries, moduleResolver } from '../model/resolve.ts';
import { holdsNothing, linksIn, type Managed, type NodeRecord } from '../model/state.ts';
import { keysRead, type PublicHalf, readsOf } from '../model/template.ts';
import type { Unresolved } from '../model/unresolved.ts';
import { ownValue } from '../utils/own-record.ts';
import type { GatheredReadings, ReadingBlocker } from './gather-readings.ts';
import { type KeyBlocker, type KeyPlaced, type KeysGathered, keySecretPlan } from './key-plan.ts';
import {
  isRemoval,
  type Lists,
  listsDaysOld,
  listsStale,
  type PackageBlocker,
  packageSteps,
  refreshLimit,
} from './package-plan.ts';
import { maskedAs, secretText } from './secrets.ts';
import { compareFile, sameBytes } from './steps/file-diff.ts';
import { type NoSuchAccount, Owners, SECRET_FILE_MODE } from './steps/owners.ts';
import type { CheckOutcome, ModuleSteps, Step } from './steps/step.ts';
import { type ModuleSurvey, secretHeld } from './survey.ts';

/** What stands in the way of a converge's act, as a value (a Blocker of src/model/blocker.ts). */
export type ConvergeBlocker =
  | { because: 'does-not-resolve'; module: string; unresolved: Unresolved }
  | { because: 'needs-not-running'; module: string; needs: string[] }
  | { because: 'held-not-managed'; module: string; held: Held }
  | { because: 'secret-differs'; module: string; secret: string; path: string }
  /** A path of the module is a link another user could have placed: nothing goes through it. */
  | { because: 'link'; module: string; path: string; words: string }
  | NoSuchAccount
  | PackageBlocker
  | ReadingBlocker
  | KeyBlocker;

/** What a machine holds of a module berth does not manage, for the blocker's words. */
export type Held =
  | { kind: 'data'; paths: string[] }
  | { kind: 'secret'; names: string[] }
  | { kind: 'file'; paths: string[] };

export type Action = 'install' | 'update' | 'release';

export interface ConvergePlan {
  /** Each module acted on, in the order the act takes them, with its steps. */
  modules: (ModuleSteps & { action: Action })[];
  blockers: ConvergeBlocker[];
  /** Whole days since the node's package lists were fetched, when a module has packages to install and it is a day or more. */
  listsDaysOld?: number;
}

/** Everything a converge is planned from, gathered before planning: the plan needs no I/O. */
export interface ConvergeInput {
  node: string;
  /** `--filter`: the module acted on alone. */
  filter?: string;
  record: NodeRecord;
  /** Catalog entries of every module in scope and of what they need. */
  entries: Entries;
  /** What the machine holds, for each module in scope that resolves and is assigned. */
  surveys: ReadonlyMap<string, ModuleSurvey>;
  /**
   * Every secret the vault keeps for the node, by `module/secret`: its value, opened, for
   * the modules whose plan reads one (`modulesReadingValues`); for the others, `SEALED`.
   */
  vault: ReadonlyMap<string, Uint8Array | typeof SEALED>;
  /** The checks run for started modules that have one, by module. */
  checks?: ReadonlyMap<string, CheckOutcome>;
  /** berth.json's `refresh_after`: how old the node's package lists may be. */
  refreshAfter?: string;
  /** The node's package lists were refreshed just before this plan (`--refresh`). */
  listsRefreshed?: boolean;
  /** The modules' values and the node's facts, and what stands in the way of them. */
  read?: GatheredReadings;
  /** The key secrets read (kept and held), the rotations asked, each `tls` secret's names. */
  keys?: KeysGathered;
  /** The state's CA's certificate, when a template of a module in scope places it (`{{ca}}`). */
  ca?: string;
}

/** No key read: a plan of modules without key secrets. */
const NO_KEYS: KeysGathered = {
  kept: new Map(),
  held: new Map(),
  rotate: new Set(),
  rotating: new Map(),
  names: new Map(),
};

/** A hook step's deadline: the definition's `timeout` when it names one (else the machine's). */
function deadlineOf(definition: ModuleDefinition): { timeout?: number } {
  return definition.timeout === undefined ? {} : { timeout: definition.timeout };
}

/** A kept value a plan reads only the presence of: it is left sealed. */
export const SEALED = Object.freeze({ sealed: true as const });

/**
 * The modules whose plan reads kept values, of those surveyed: a managed one with files
 * (rendered with the values, which a diff hides), with a secret on the machine (compared
 * with the vault's), or with a key secret (read for its certificate's life and its kid).
 * Every other plan reads only whether a value is kept, so a preview that restores or mints
 * a random secret opens none.
 */
export function modulesReadingValues(
  record: NodeRecord,
  definitions: ReadonlyMap<string, ModuleDefinition>,
  surveys: ReadonlyMap<string, ModuleSurvey>,
): Set<string> {
  const reading = new Set<string>();
  for (const [module, definition] of definitions) {
    const survey = surveys.get(module);
    if (!ownValue(record.managed, module) || !survey) continue;
    const held = Object.values(definition.secrets).some(
      (spec) => secretHeld(survey.facts, spec)?.length,
    );
    const keys = Object.values(definition.secrets).some((spec) => isKeySecretKind(spec.kind));
    if (held || keys || Object.keys(definition.files).length > 0) reading.add(module);
  }
  return reading;
}

/**
 * What a diff shows in place of: every value the vault holds for the node that was opened
 * (all of them, when a plan shows a diff: see converge.ts), of any module, and every value
 * found on the machine for the modules surveyed.
 */
export function secretsShown(input: Pick<ConvergeInput, 'vault' | 'surveys' | 'entries'>) {
  const shown: NamedValue[] = [];
  for (const [key, value] of input.vault)
    if (value instanceof Uint8Array && value.length > 0)
      shown.push(...maskedAs(key.slice(key.indexOf('/') + 1), value));
  for (const [module, survey] of input.surveys) {
    const entry = input.entries.get(module);
    if (!entry || !('definition' in entry)) continue;
    for (const [secret, spec] of Object.entries(entry.definition.secrets)) {
      const held = secretHeld(survey.facts, spec);
      if (held?.length) shown.push(...maskedAs(secret, held));
    }
  }
  return shown;
}

/** Whether a plan shows a file's diff, which may hold any secret of the node. */
export function showsDiff(plan: ConvergePlan): boolean {
  return plan.modules.some(({ steps }) =>
    steps.some((step) => step.do === 'write' && step.why.because === 'differs'),
  );
}

/** A kept value's bytes, which the plan opened (`modulesReadingValues`) before it reads them. */
function openedValue(kept: Uint8Array | typeof SEALED, module: string, secret: string) {
  if (kept instanceof Uint8Array) return kept;
  throw new Error(`berth planned ${module} with ${secret} left sealed, but the plan reads it`);
}

/** Where a module's templates find a key secret: known now, or not until the act mints it. */
function placeKey(
  secret: string,
  placed: KeyPlaced | undefined,
  into: {
    values: Record<string, string>;
    halves: Record<string, PublicHalf>;
    certs: Record<string, string>;
    toMint: Set<string>;
  },
): void {
  if (!placed) return;
  if ('minted' in placed) {
    into.toMint.add(secret);
    return;
  }
  into.values[secret] = placed.known.pem;
  into.halves[secret] = placed.known.half;
  if (placed.known.certificate !== undefined) into.certs[secret] = placed.known.certificate;
}

/** The modules a converge looks at: assigned or managed, and within the filter. */
export function modulesInScope(record: NodeRecord, filter?: string): string[] {
  const all = new Set([...record.assigned, ...Object.keys(record.managed)]);
  return [...all].filter((module) => filter === undefined || module === filter).sort();
}

/** The assigned modules in scope that resolve: the ones whose machine holdings are surveyed. */
export function modulesToSurvey(
  record: NodeRecord,
  entries: Entries,
  filter?: string,
): Map<string, ModuleDefinition> {
  const assigned = new Set(record.assigned);
  const definitions = new Map<string, ModuleDefinition>();
  const resolve = moduleResolver(assigned, entries);
  for (const module of modulesInScope(record, filter)) {
    if (!assigned.has(module)) continue;
    const resolution = resolve(module);
    if (resolution.ok) definitions.set(module, resolution.definition);
  }
  return definitions;
}

/**
 * Plans a converge, module by module: install what is assigned and absent, update what
 * berth manages, release what is managed and no longer assigned, and a blocker for
 * anything it must not touch. `desired` holds the bytes berth would write to each file,
 * for the digest to fingerprint; it never leaves the act.
 */
export function planConverge(input: ConvergeInput): {
  plan: ConvergePlan;
  desired: Map<string, Map<string, Uint8Array>>;
} {
  const { record, entries, filter } = input;
  const assigned = new Set(record.assigned);
  const plan: ConvergePlan = { modules: [], blockers: [] };
  const desired = new Map<string, Map<string, Uint8Array>>();
  const definitions = new Map<string, ModuleDefinition>();
  const resolve = moduleResolver(assigned, entries);
  // Lists older than refresh_after are refreshed as the act's first step of packages.
  const facts = [...input.surveys.values()].find((survey) => survey.packages)?.packages;
  const withPackages = new Set(
    [...input.surveys].filter(([, survey]) => survey.packages).map(([module]) => module),
  );
  const limit = refreshLimit(
    input.refreshAfter,
    new Map(
      [...withPackages].flatMap((module) => {
        const entry = entries.get(module);
        return entry && 'definition' in entry ? [[module, entry.definition] as const] : [];
      }),
    ),
  );
  const lists: Lists = input.listsRefreshed
    ? { refreshed: true }
    : { refreshing: listsStale(facts, limit) };

  for (const module of modulesInScope(record, filter)) {
    const entry = entries.get(module);
    const managed = ownValue(record.managed, module);
    if (!assigned.has(module)) {
      const definition = entry && 'definition' in entry ? entry.definition : undefined;
      if (definition) definitions.set(module, definition);
      const steps: Step[] = definition?.stop
        ? [{ do: 'stop', module, script: definition.stop, ...deadlineOf(definition) }]
        : [];
      plan.modules.push({
        module,
        action: 'release',
        steps: [...steps, releaseStep(module, definition)],
      });
      continue;
    }
    const resolution = resolve(module);
    if (!resolution.ok) {
      plan.blockers.push({
        because: 'does-not-resolve',
        module,
        unresolved: resolution.unresolved,
      });
      continue;
    }
    const { definition } = resolution;
    definitions.set(module, definition);
    const unread = input.read?.blockers.get(module) ?? [];
    if (unread.length > 0) {
      // Its files cannot be rendered, nor its hooks told, without every value and fact.
      plan.blockers.push(...unread);
      continue;
    }
    if (filter !== undefined) {
      // Alone, a module is acted on without the modules it needs: they must be running.
      const needs = definition.needs.filter((need) => !ownValue(record.managed, need)?.started);
      if (needs.length > 0) {
        plan.blockers.push({ because: 'needs-not-running', module, needs });
        continue;
      }
    }
    const survey = input.surveys.get(module);
    if (!survey) continue;
    const links = linksIn(survey.holdings);
    if (links.length > 0) {
      // Whatever else the module needs waits: no step may read, write or chown through one.
      for (const { path, words } of links)
        plan.blockers.push({ because: 'link', module, path, words });
      continue;
    }
    if (!managed) {
      if (!holdsNothing(survey.holdings)) {
        plan.blockers.push({ because: 'held-not-managed', module, held: heldOf(survey) });
        continue;
      }
      const install = installSteps(input, module, definition, survey, lists);
      plan.blockers.push(...install.blockers);
      plan.modules.push({ module, action: 'install', steps: install.steps });
      continue;
    }
    const update = updateSteps(input, module, definition, survey, managed, lists);
    desired.set(module, update.desired);
    plan.blockers.push(...update.blockers);
    if (update.steps.length > 0)
      plan.modules.push({ module, action: 'update', steps: update.steps });
  }
  plan.blockers.push(...(input.read?.undeclared ?? []));
  plan.modules = orderForAct(plan.modules, definitions);
  const installing = plan.modules.some(({ steps }) =>
    steps.some((step) => step.do === 'package' && !isRemoval(step)),
  );
  const refresh = lists.refreshing && installing && facts?.manager === 'apt' && limit;
  const held = facts?.manager === 'apt' ? facts.startsHeld : undefined;
  if (held || refresh) {
    const managed = Object.keys(record.managed).sort();
    beforePackages(plan.modules, withPackages, managed, (module) => [
      ...(held ? [{ do: 'unhold' as const, module, kept: held.kept }] : []),
      ...(refresh
        ? [
            {
              do: 'refresh' as const,
              module,
              ...(facts.listsAge === undefined ? {} : { age: facts.listsAge }),
              limit: refresh.text,
              ...(refresh.by === undefined ? {} : { by: refresh.by }),
            },
          ]
        : []),
    ]);
  }
  const listsOld = listsDaysOld(facts);
  if (!refresh && listsOld !== undefined && (installing || plan.blockers.some(isPackageBlocker)))
    plan.listsDaysOld = listsOld;
  return { plan, desired };
}

/**
 * A fresh install. A secret the vault still holds for the module (it was managed here,
 * released, and its files removed) is restored, never minted over: something else may
 * still use it, and the vault's copy may be the only one.
 */
function installSteps(
  input: ConvergeInput,
  module: string,
  definition: ModuleDefinition,
  survey: ModuleSurvey,
  lists: Lists,
) {
  // Managed before anything changes on the node for it, so that an act cut anywhere (in
  // its packages' install, say) is carried on by the next converge, never blocked as data
  // berth does not manage. Its packages first, no service started: the module's files are
  // written before its start.
  const packages = packageSteps(module, definition, survey.packages, true, lists);
  const owners = new Owners(module, survey, packagesPending(packages));
  const steps: Step[] = [{ do: 'manage', module, started: !definition.start }, ...packages.steps];
  const blockers: ConvergeBlocker[] = [];
  for (const data of definition.data) steps.push(owners.directory(data));
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    if (spec.match !== undefined) {
      // Inside a file: the vault's value, or a fresh one, is placed by the file's write.
      if (!input.vault.has(`${module}/${secret}`)) steps.push(mintInside(module, secret, spec));
      continue;
    }
    if (isKeyed(spec)) {
      const kept = input.vault.has(`${module}/${secret}`);
      const planned = keySecretPlan(input.keys ?? NO_KEYS, module, secret, spec, owners, {
        held: false,
        kept,
      });
      steps.push(...planned.steps);
      blockers.push(...planned.blockers);
      continue;
    }
    const attributes = owners.secretFile(spec.path, spec);
    steps.push(
      input.vault.has(`${module}/${secret}`)
        ? { do: 'restore', module, secret, path: spec.path, ...attributes }
        : { do: 'mint', module, secret, path: spec.path, bytes: spec.bytes, ...attributes },
    );
  }
  for (const [path, file] of Object.entries(definition.files)) {
    steps.push({
      do: 'write',
      module,
      path,
      ...owners.moduleFile(path, file),
      why: { because: 'install' },
    });
  }
  if (definition.setup) steps.push(setupStep(module, definition, definition.setup));
  if (definition.start)
    steps.push({ do: 'start', module, script: definition.start, ...deadlineOf(definition) });
  lookUpAfterInstall(packages.steps, owners);
  return { steps, blockers: [...packages.blockers, ...owners.blockers, ...blockers] };
}

/** A secret of a key kind: a key pair, or a `tls` secret's key and certificate. */
function isKeyed(spec: SecretDefinition): spec is SecretDefinition & { kind: KeySecretKind } {
  return isKeySecretKind(spec.kind);
}

/** The module's setup, once its files are in place; `pending`: owed by an act that did not see it succeed. */
function setupStep(
  module: string,
  definition: ModuleDefinition,
  script: string,
  pending = false,
): Step {
  return {
    do: 'setup',
    module,
    script,
    ...(pending ? { pending } : {}),
    ...deadlineOf(definition),
  };
}

function updateSteps(
  input: ConvergeInput,
  module: string,
  definition: ModuleDefinition,
  survey: ModuleSurvey,
  managed: Managed,
  lists: Lists,
) {
  const { started } = managed;
  // A package missing or not at its pinned version is installed first; a running module's
  // service is restarted by its package as the package does, its files being berth's.
  const packages = packageSteps(module, definition, survey.packages, !started, lists);
  const steps: Step[] = [...packages.steps];
  const blockers: ConvergeBlocker[] = [...packages.blockers];
  const desired = new Map<string, Uint8Array>();
  const values: Record<string, string> = {};
  const toMint = new Set<string>();
  const owners = new Owners(
    module,
    survey,
    packagesPending(packages),
    readableInPlace(input, module, definition, survey),
  );
  // Only files are rendered with the kept values, and only a file's diff hides them.
  const hasFiles = Object.keys(definition.files).length > 0;

  for (const data of definition.data) {
    const fact = owners.fact(data.path);
    if (fact?.kind === 'missing') steps.push(owners.directory(data));
    else {
      const drift = owners.drift(data.path, data);
      if (drift.length > 0) steps.push({ ...owners.directory(data), drift });
    }
  }
  // What the module's templates read of its key secrets: their public halves and certificates.
  const halves: Record<string, PublicHalf> = {};
  const certs: Record<string, string> = {};
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    const held = secretHeld(survey.facts, spec);
    const sealed = input.vault.get(`${module}/${secret}`);
    const kept = () => openedValue(sealed ?? SEALED, module, secret);
    if (isKeyed(spec)) {
      const planned = keySecretPlan(input.keys ?? NO_KEYS, module, secret, spec, owners, {
        held: Boolean(held?.length),
        kept: sealed !== undefined,
      });
      steps.push(...planned.steps);
      blockers.push(...planned.blockers);
      placeKey(secret, planned.placed, { values, halves, certs, toMint });
      if (planned.steps.length > 0 || planned.blockers.length > 0 || !held?.length) continue;
      // The vault's key, in place: rewritten as it is, to mend its owner.
      const drift = owners.secretDrift(spec.path, spec);
      if (drift.length > 0)
        steps.push({
          do: 'restore',
          module,
          secret,
          path: spec.path,
          ...owners.secretFile(spec.path, spec),
          drift,
        });
      continue;
    }
    if (sealed && hasFiles) values[secret] = secretText(kept());
    if (spec.match !== undefined) {
      // Inside a file: its owner and mode are the file's, and the file's write places it.
      if (!held?.length && !sealed) {
        steps.push(mintInside(module, secret, spec));
        toMint.add(secret);
      } else if (held?.length && !sealed) {
        steps.push({ do: 'keep', module, secret, path: spec.path, match: spec.match });
        values[secret] = secretText(held);
      } else if (held?.length && sealed && !sameBytes(held, kept())) {
        blockers.push({ because: 'secret-differs', module, secret, path: spec.path });
      }
      continue;
    }
    const attributes = owners.secretFile(spec.path, spec);
    if (!held?.length) {
      if (sealed) steps.push({ do: 'restore', module, secret, path: spec.path, ...attributes });
      else {
        steps.push({
          do: 'mint',
          module,
          secret,
          path: spec.path,
          bytes: spec.bytes,
          ...attributes,
        });
        toMint.add(secret);
      }
      continue;
    }
    if (!sealed) {
      steps.push({ do: 'keep', module, secret, path: spec.path });
      values[secret] = secretText(held);
    } else if (!sameBytes(held, kept())) {
      blockers.push({ because: 'secret-differs', module, secret, path: spec.path });
      continue;
    }
    // The value is the vault's (or read into it first): rewritten as it is, to mend its owner.
    const drift = owners.secretDrift(spec.path, spec);
    if (drift.length > 0)
      steps.push({ do: 'restore', module, secret, path: spec.path, ...attributes, drift });
  }
  const hidden = secretsShown(input);
  for (const [path, file] of Object.entries(definition.files)) {
    const attributes = owners.moduleFile(path, file);
    const reads = readsOf(file.content);
    const names = [...reads.secret, ...keysRead(reads)];
    if (names.some((name) => toMint.has(name))) {
      steps.push({
        do: 'write',
        module,
        path,
        ...attributes,
        why: { because: 'carries-minted-secret' },
      });
      continue;
    }
    const compared = compareFile(
      input.node,
      path,
      survey.facts.get(path),
      file.content,
      { values, hidden },
      {
        ...inputsFor(input.read?.readings, module),
        keys: halves,
        certs,
        ...(input.ca === undefined ? {} : { ca: input.ca }),
      },
    );
    desired.set(path, compared.wanted);
    const drift = owners.moduleFileDrift(path, file);
    if (compared.why) steps.push({ do: 'write', module, path, ...attributes, why: compared.why });
    else if (drift.length > 0)
      steps.push({ do: 'write', module, path, ...attributes, why: { because: 'drift', drift } });
  }
  blockers.push(...owners.blockers);
  lookUpAfterInstall(packages.steps, owners);
  const check = input.checks?.get(module);
  const failing = started && check !== undefined && check.code !== 0;
  const rewrote = steps.some(
    (step) =>
      step.do === 'write' ||
      step.do === 'restore' ||
      step.do === 'rotate' ||
      step.do === 'renew' ||
      (step.do === 'mint' && !step.inside),
  );
  // A setup begun and not seen to succeed is owed, and with it what follows it: its
  // module's files were changed by that act, and are not live yet.
  const setupOwed = managed.pending?.includes('setup') === true;
  if (definition.setup && (rewrote || setupOwed))
    steps.push(setupStep(module, definition, definition.setup, setupOwed && !rewrote));
  if (failing && definition.start)
    steps.push({ do: 'start', module, script: definition.start, check, ...deadlineOf(definition) });
  else if (started && (rewrote || (setupOwed && definition.setup)))
    steps.push({ do: 'reload', module, script: definition.reload, ...deadlineOf(definition) });
  else if (started && managed.pending?.includes('reload') && definition.reload)
    // A reload that failed is owed until one succeeds: the change it was for is not live.
    steps.push({
      do: 'reload',
      module,
      script: definition.reload,
      pending: true,
      ...deadlineOf(definition),
    });
  if (!started && definition.start)
    steps.push({ do: 'start', module, script: definition.start, ...deadlineOf(definition) });
  else if (!started) steps.push({ do: 'manage', module, started: true });
  return { steps, blockers, desired };
}

/**
 * Whether the module's packages are still to come: to be installed, or blocked. An owner
 * the machine does not know is then one they make, looked up once they are installed; with
 * them blocked, its blocker would only follow from theirs (redis-server not installed, so
 * no user redis), so it is folded into it.
 */
function packagesPending(packages: { steps: readonly Step[]; blockers: readonly unknown[] }) {
  return packages.steps.length > 0 || packages.blockers.length > 0;
}

/**
 * The paths whose file's owner could already read every value berth writes there: each
 * secret placed there is in that very file now, and was found there (kept by a take or a
 * converge, as the record says, or by this plan; or, for a take of an earlier berth, as
 * the account it was taken from says). Such a file keeps its owner: adopting a running
 * service never leaves its daemon unable to read its own configuration.
 */
function readableInPlace(
  input: ConvergeInput,
  module: string,
  definition: ModuleDefinition,
  survey: ModuleSurvey,
): Set<string> {
  const inPlace = new Set<string>();
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    const held = secretHeld(survey.facts, spec);
    if (!held?.length) continue;
    const kept = input.vault.get(`${module}/${secret}`);
    // Not kept yet: this plan keeps it from that file.
    if (kept === undefined) inPlace.add(secret);
    else if (kept instanceof Uint8Array && sameBytes(held, kept)) {
      if (foundAt(input.record, module, secret, survey) === spec.path) inPlace.add(secret);
    }
  }
  const readable = new Set<string>();
  for (const [secret, spec] of Object.entries(definition.secrets))
    if (spec.match === undefined && inPlace.has(secret)) readable.add(spec.path);
  for (const [path, file] of Object.entries(definition.files)) {
    const names = [...file.content.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1] as string);
    const here = (name: string) => {
      const spec = ownValue(definition.secrets, name);
      return spec?.match !== undefined && spec.path === path && inPlace.has(name);
    };
    if (names.length > 0 && names.every(here)) readable.add(path);
  }
  return readable;
}

/** Where berth found the kept value of a secret, if it did, and the file holds it still. */
function foundAt(
  record: NodeRecord,
  module: string,
  secret: string,
  survey: ModuleSurvey,
): string | undefined {
  const kept = ownValue(ownValue(record.found ?? {}, module) ?? {}, secret);
  if (kept !== undefined) return kept;
  const taken = record.account && ownValue(record.account.modules, module);
  const seen = taken && ownValue(taken.secrets, secret);
  const now = ownValue(survey.holdings.secrets, secret);
  return seen?.found && seen.fingerprint !== undefined && seen.fingerprint === now?.fingerprint
    ? seen.path
    : undefined;
}

/**
 * The owners the machine does not know yet, named on the module's last package step: the
 * act looks them up once its packages, which make them, are installed.
 */
function lookUpAfterInstall(packages: readonly Step[], owners: Owners): void {
  const last = packages.at(-1);
  const { users, groups } = owners.later;
  if (last?.do === 'package' && users.size + groups.size > 0)
    last.lookUp = { users: [...users].sort(), groups: [...groups].sort() };
}

/**
 * Releases first, each before the modules it needs (a module stops before what it
 * runs on); then installs and updates, each after the modules it needs.
 */
function orderForAct(
  modules: ConvergePlan['modules'],
  definitions: ReadonlyMap<string, ModuleDefinition>,
): ConvergePlan['modules'] {
  const releases = modules.filter((item) => item.action === 'release');
  const rest = modules.filter((item) => item.action !== 'release');
  return [...needsFirst(releases, definitions).reverse(), ...needsFirst(rest, definitions)];
}

/**
 * The modules each after those it needs: depth first, each module once, by a stack of
 * its own (a module with the next of its needs to look at) rather than the call stack,
 * so that no chain of needs is too deep to order.
 */
function needsFirst(
  modules: ConvergePlan['modules'],
  definitions: ReadonlyMap<string, ModuleDefinition>,
): ConvergePlan['modules'] {
  const byName = new Map(modules.map((item) => [item.module, item]));
  const ordered: ConvergePlan['modules'] = [];
  const seen = new Set<string>();
  for (const start of byName.keys()) {
    if (seen.has(start)) continue;
    seen.add(start);
    const path = [{ module: start, next: 0 }];
    while (path.length > 0) {
      const top = path[path.length - 1] as { module: string; next: number };
      const need = definitions.get(top.module)?.needs[top.next++];
      if (need === undefined) {
        path.pop();
        const item = byName.get(top.module);
        if (item) ordered.push(item);
      } else if (!seen.has(need)) {
        seen.add(need);
        path.push({ module: need, next: 0 });
      }
    }
  }
  return ordered;
}

function heldOf(survey: ModuleSurvey): Held {
  const { holdings } = survey;
  const data = holdings.data.filter((item) => item.found).map((item) => item.path);
  if (data.length > 0) return { kind: 'data', paths: data };
  const secrets = Object.entries(holdings.secrets).filter(([, secret]) => secret.found);
  if (secrets.length > 0) return { kind: 'secret', names: secrets.map(([name]) => name) };
  const files = Object.entries(holdings.files).filter(([, file]) => file.found);
  return { kind: 'file', paths: files.map(([path]) => path) };
}

/** A secret inside a file, minted into the vault only: the file's write places it. */
function mintInside(module: string, secret: string, spec: { path: string; bytes: number }): Step {
  return {
    do: 'mint',
    module,
    secret,
    path: spec.path,
    bytes: spec.bytes,
    mode: SECRET_FILE_MODE,
    inside: true,
  };
}

function isPackageBlocker(blocker: ConvergeBlocker): blocker is PackageBlocker {
  return blocker.because.startsWith('package') || blocker.because === 'no-package-manager';
}

/** Stops managing a module; the packages it names stay installed, and the step says so. */
function releaseStep(module: string, definition: ModuleDefinition | undefined): Step {
  const packages =
    definition?.packages.filter((spec) => spec.state !== 'absent').map((spec) => spec.name) ?? [];
  return packages.length > 0 ? { do: 'release', module, packages } : { do: 'release', module };
}

/**
 * Steps of the node's packages as a whole (lifting a hold on service starts a killed
 * install left), made for a module by `stepsFor`, put before anything else the act does to
 * packages: in the first module acted on that has packages (after recording that berth
 * manages it), else as an update of the first managed one that has them (`managed`).
 */
export function beforePackages(
  modules: ConvergePlan['modules'],
  withPackages: ReadonlySet<string>,
  managed: readonly string[],
  stepsFor: (module: string) => Step[],
): void {
  const first = modules.find((item) => item.action !== 'release' && withPackages.has(item.module));
  if (first) {
    const steps = stepsFor(first.module);
    const at = first.steps.findIndex((step) => step.do !== 'manage');
    first.steps.splice(at === -1 ? first.steps.length : at, 0, ...steps);
    return;
  }
  const module = managed.find((name) => withPackages.has(name));
  if (module === undefined) return;
  const releases = modules.filter((item) => item.action === 'release').length;
  modules.splice(releases, 0, { module, action: 'update', steps: stepsFor(module) });
}
