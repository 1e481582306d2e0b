import type { KeyRead } from '../../keys/key-secret.ts';
import { isKeySecretKind } from '../../keys/kinds.ts';
import { keyValueBytes, keyValueOf, rotatingName } from '../../keys/secret-value.ts';
import { type Change, MachineError, type WriteOptions } from '../../machines/machine.ts';
import type { Blocker } from '../../model/blocker.ts';
import type { ModuleDefinition } from '../../model/catalog.ts';
import { inputsFor, type Readings } from '../../model/readings.ts';
import {
  type Managed,
  withAssigned,
  withFound,
  withManaged,
  withPackages,
  withStartsHeld,
} from '../../model/state.ts';
import { type PublicHalf, readsOf, renderTemplate } from '../../model/template.ts';
import { waitSeconds } from '../../packages/packages.ts';
import { type KeptSecret, StoreError } from '../../stores/stores.ts';
import { fingerprintWith } from '../../utils/digest.ts';
import { once } from '../../utils/once.ts';
import { ownValue } from '../../utils/own-record.ts';
import type { CommandContext } from '../context.ts';
import { isRemoval, packageSteps } from '../package-plan.ts';
import { mintSecret, secretText } from '../secrets.ts';
import { signingCa } from '../state-ca.ts';
import { secretInside } from '../survey.ts';
import { HookFailed, runHook, stopReason } from './hook.ts';
import {
  type CertificateFile,
  changesFiles,
  type FileStep,
  type LaterOwners,
  type ModuleSteps,
  type Step,
} from './step.ts';
import type { Told, Voice } from './told.ts';

/** Where an act stopped: before a module's next step (told to stop), or at a failing one. */
export interface StepFailure {
  module: string;
  /** `stopped`: berth was told to stop between steps; `failed`: a step failed. */
  how: 'stopped' | 'failed';
  /** In the words it was told with; or, planned again at the step, what stands in the way. */
  why: string | { blockers: Blocker[] };
  code:
    | 'interrupted'
    | 'unreachable'
    | 'hook_failed'
    | 'hook_timeout'
    | 'package_failed'
    | 'refresh_failed'
    | 'step_failed';
}

/** What the engine did: every step done, in order, and where it stopped if it did. */
export interface Carried {
  told: Told[];
  failure?: StepFailure;
}

/** How long an install waits for the package manager's lock unless told (`--lock-timeout`). */
const PACKAGE_LOCK_WAIT_MS = 10_000;

/** A step's own failure, in words (a store's failure is not one: it ends the act as such). */
class StepFailed extends Error {}

/** A step planned again at the act that finds blockers the preview did not: them, as values. */
class StillBlocked extends Error {
  constructor(readonly blockers: Blocker[]) {
    super(`blocked: ${blockers.map((blocker) => blocker.because).join(', ')}`);
  }
}

/** What makes and reads keys, loaded when a step first mints, places or reads one (jose, PKI.js). */
const loadMint = once(() => import('../../keys/mint.ts'));
const loadKeyReading = once(() => import('../../keys/key-secret.ts'));

/**
 * Carries out the steps of any plan, module by module, in order; the first failing step
 * stops it, and what was done is told. Each step is recorded as it is done, so a later
 * act carries on. A module's consecutive steps that change files go as one batch (one
 * round trip over ssh), as do its consecutive `keep`s (one survey); a stop asked for is
 * heeded before a batch, not within it. Files are rendered with the values and facts the
 * plan was made with (`readings`), and hooks see them in their environment.
 */
export async function carryOut(
  plan: readonly ModuleSteps[],
  node: string,
  context: CommandContext,
  voice: Voice,
  readings?: Readings,
): Promise<Carried> {
  const told: Told[] = [];
  const tell = (done: Omit<Told, 'voice'>) => {
    const said = { ...done, voice };
    told.push(said);
    context.tell?.({ kind: 'step', node, told: said });
  };
  // The owners looked up after the packages that make them were installed, by name.
  const later: LaterIds = { users: new Map(), groups: new Map() };
  for (const { module, steps } of plan) {
    // A setup is owed from the module's first change on: an act cut after it wrote the
    // module's files, and before its setup succeeded, leaves it to the next converge.
    let setupOwed = !steps.some((step) => step.do === 'setup');
    for (const turn of turnsOf(steps)) {
      if (context.signal?.aborted)
        return {
          told,
          failure: { module, how: 'stopped', why: stopReason(context.signal), code: 'interrupted' },
        };
      try {
        if (
          !setupOwed &&
          (turn.kind === 'files' || (turn.kind === 'one' && turn.step.do === 'setup'))
        ) {
          await owe(context, module, 'setup', true);
          setupOwed = true;
        }
        if (turn.kind === 'files')
          await doChanges(turn.steps, node, context, tell, later, readings);
        else if (turn.kind === 'packages') await doPackages(turn.steps, node, context, tell, later);
        else if (turn.kind === 'keeps') await doKeeps(turn.steps, node, context, tell);
        else await doStep(turn.step, node, context, tell, readings);
      } catch (error) {
        if (error instanceof StoreError) throw error;
        const why =
          error instanceof StillBlocked ? { blockers: error.blockers } : (error as Error).message;
        // A hook stopped because berth was told to stop was interrupted, not failed.
        const code = context.signal?.aborted ? 'interrupted' : failureCode(turn, error);
        return { told, failure: { module, how: 'failed', why, code } };
      }
    }
  }
  return { told };
}

/** The ids of owners a module's packages made, found after their install, by name. */
interface LaterIds {
  users: Map<string, number>;
  groups: Map<string, number>;
}

type KeepStep = Step & { do: 'keep' };
type PackageStep = Step & { do: 'package' };
type Turn =
  | { kind: 'files'; steps: FileStep[] }
  | { kind: 'keeps'; steps: KeepStep[] }
  | { kind: 'packages'; steps: PackageStep[] }
  | { kind: 'one'; step: Exclude<Step, FileStep | KeepStep | PackageStep> };

/** A module's steps in turns: a run of steps that change files, a run of keeps, or one step. */
/** The code of a turn's failure: the machine not reached, a hook, the packages, or a step. */
function failureCode(turn: Turn, error: unknown): StepFailure['code'] {
  if (error instanceof MachineError && error.failure === 'unreachable') return 'unreachable';
  if (error instanceof HookFailed) return error.code;
  if (turn.kind === 'one' && turn.step.do === 'refresh') return 'refresh_failed';
  if (turn.kind === 'packages' || (turn.kind === 'one' && turn.step.do === 'unhold'))
    return 'package_failed';
  if (turn.kind === 'one' && HOOKS.has(turn.step.do)) return 'hook_failed';
  return 'step_failed';
}

/** The steps that run a module's own hook. */
const HOOKS: ReadonlySet<Step['do']> = new Set(['setup', 'start', 'reload', 'stop', 'release']);

function turnsOf(steps: readonly Step[]): Turn[] {
  const turns: Turn[] = [];
  for (const step of steps) {
    const last = turns.at(-1);
    if (changesFiles(step)) {
      if (last?.kind === 'files') last.steps.push(step);
      else turns.push({ kind: 'files', steps: [step] });
    } else if (step.do === 'keep') {
      if (last?.kind === 'keeps') last.steps.push(step);
      else turns.push({ kind: 'keeps', steps: [step] });
    } else if (step.do === 'package') {
      if (last?.kind === 'packages') last.steps.push(step);
      else turns.push({ kind: 'packages', steps: [step] });
    } else turns.push({ kind: 'one', step });
  }
  return turns;
}

/**
 * Secrets found on the machine, read into the vault in one survey and one write. A value
 * whose fingerprint is not the one its plan saw is not kept: what was previewed is kept.
 */
async function doKeeps(
  steps: readonly KeepStep[],
  node: string,
  context: CommandContext,
  tell: (done: Omit<Told, 'voice'>) => void,
): Promise<void> {
  const { store, machine } = context;
  const facts = await machine.survey(
    steps.flatMap((step) => [
      { path: step.path, read: true },
      ...(step.certificate ? [{ path: step.certificate.path, read: true }] : []),
    ]),
  );
  const bytesOf = (path: string) => {
    const fact = facts.get(path);
    return fact?.kind === 'file' ? fact.bytes : undefined;
  };
  const key = steps.some((step) => step.fingerprint || step.certificate?.fingerprint)
    ? await store.vault.fingerprintKey()
    : undefined;
  const at = context.now().toISOString();
  const toKeep: KeptSecret[] = [];
  for (const step of steps) {
    const bytes = bytesOf(step.path);
    const value = bytes && step.match !== undefined ? secretInside(bytes, step.match) : bytes;
    if (!value?.length) throw new StepFailed(`${step.secret} is gone from ${step.path} on ${node}`);
    const certificate = step.certificate && bytesOf(step.certificate.path);
    const changed = async (fingerprint: string | undefined, bytes: Uint8Array | undefined) =>
      key !== undefined &&
      fingerprint !== undefined &&
      (bytes === undefined || (await fingerprintWith(key, bytes)) !== fingerprint);
    if (
      (await changed(step.fingerprint, value)) ||
      (await changed(step.certificate?.fingerprint, certificate))
    )
      throw new StepFailed(
        `secret ${step.secret} of ${step.module} changed on ${node} since the account was taken; adopt ${node} again`,
      );
    let kept = value;
    if (step.kind !== undefined) {
      const { foundKeyValue, readKeySecret } = await loadKeyReading();
      kept = foundKeyValue(value, certificate);
      const read = await readKeySecret(kept, step.kind, context.now());
      if ('refused' in read)
        throw new StepFailed(
          `${step.path} on ${node} is no longer an ${step.kind} key berth keeps: ${read.refused.words}`,
        );
    }
    const from = step.certificate ? ` and ${step.certificate.path}` : '';
    toKeep.push({
      module: step.module,
      secret: step.secret,
      entry: { value: kept, origin: `found on ${node} at ${step.path}${from}`, at },
    });
  }
  await store.vault.put(...toKeep);
  // Found in that file: its owner could read the value, and keeps the file (readableInPlace).
  await store.saveRecord(
    withFound(
      await store.record(),
      steps.map(({ module, secret, path }) => ({ module, secret, path })),
    ),
  );
  for (const step of steps) tell({ step });
}

/**
 * A module's packages, installed at once at exactly the versions planned; each is then
 * named among those berth installed on the node. A package manager that refuses is said in
 * its own words; one whose lock stayed held, with who holds it. The owners the module names
 * that its packages make are then looked up, into `later`: one still unknown fails the step.
 */
async function doPackages(
  planned: readonly PackageStep[],
  node: string,
  context: CommandContext,
  tell: (done: Omit<Told, 'voice'>) => void,
  later: LaterIds,
): Promise<void> {
  const waitMs = context.line.lockTimeout ?? PACKAGE_LOCK_WAIT_MS;
  const { store } = context;
  const steps = planned.some((step) => step.afterRefresh)
    ? await plannedOnRefreshedLists(planned, context)
    : planned;
  const holdStarts = steps.some((step) => step.holdStarts);
  // Kept until the install answers: an install that never does may have left its hold.
  if (holdStarts)
    await store.saveRecord(withStartsHeld(await store.record(), context.now().toISOString()));
  const installed = await context.machine.install(
    steps.map((step) =>
      step.how === 'remove' || step.how === 'purge'
        ? { name: step.package, remove: step.how }
        : { name: step.package, version: step.version as string },
    ),
    { waitMs, holdStarts },
  );
  if (holdStarts) await store.saveRecord(withStartsHeld(await store.record(), undefined));
  if (!installed.ok) {
    const names = steps.map((step) => step.package).join(', ');
    if (installed.busy)
      throw new StepFailed(
        `apt on ${node} is busy (held by ${installed.busy.command}, pid ${installed.busy.pid}); berth waited ${waitSeconds(waitMs)}s for it to install ${names}`,
      );
    throw new StepFailed(`installing ${names} on ${node} failed: ${installed.errors.join(' ')}`);
  }
  await store.saveRecord(
    withPackages(
      await store.record(),
      steps.filter((step) => !isRemoval(step)).map((step) => step.package),
      steps.filter(isRemoval).map((step) => step.package),
    ),
  );
  const lookUp = steps.find((step) => step.lookUp)?.lookUp;
  if (lookUp) {
    const found = (await context.machine.survey([], lookUp)).accounts;
    const missing = [
      ...lookUp.users
        .filter((name) => found?.users.get(name) === undefined)
        .map((name) => `user ${name}`),
      ...lookUp.groups
        .filter((name) => found?.groups.get(name) === undefined)
        .map((name) => `group ${name}`),
    ];
    if (missing.length > 0)
      throw new StepFailed(
        `${steps.map((step) => step.package).join(', ')} installed, but ${node} still has no ${missing.join(', no ')}`,
      );
    for (const [name, id] of found?.users ?? []) later.users.set(name, id);
    for (const [name, id] of found?.groups ?? []) later.groups.set(name, id);
  }
  for (const step of steps) tell({ step });
}

/**
 * A module's packages planned before the act refreshed the lists, planned again on what
 * they offer now, in one survey: exact versions, and what apt installs beside them. What
 * the refreshed lists lack, or apt would not install, fails the step in the preview's words.
 */
async function plannedOnRefreshedLists(
  planned: readonly PackageStep[],
  context: CommandContext,
): Promise<PackageStep[]> {
  const module = (planned[0] as PackageStep).module;
  const entry = await context.catalog.entry(module);
  if (!('definition' in entry)) throw new StepFailed(`the definition of ${module} is gone`);
  const { definition } = entry;
  const survey = await context.machine.survey([], undefined, [
    { module, packages: definition.packages },
  ]);
  const holdStarts = planned.some((step) => step.holdStarts);
  const again = packageSteps(module, definition, survey.packages, holdStarts, { refreshed: true });
  if (again.blockers.length > 0) throw new StillBlocked(again.blockers);
  const steps = again.steps as PackageStep[];
  const lookUp = planned.find((step) => step.lookUp)?.lookUp;
  const last = steps.at(-1);
  if (last && lookUp) last.lookUp = lookUp;
  return steps;
}

/**
 * Steps that change files, as one batch: the secrets it mints (random bytes, keys, a
 * `tls` secret's key and certificate from the state's CA), renews, or rotates to (the key
 * its preview named, kept rotating in the vault since) put into the vault first, in one
 * write, so that a file carrying one is rendered with it; then each step made ready, then
 * all made on the machine at once. Each step done is told; the first that was not throws.
 * A batch that stops leaves the secrets minted for its later files in the vault, as a mint
 * whose write failed does: the next act restores them rather than minting anew.
 */
async function doChanges(
  planned: readonly FileStep[],
  node: string,
  context: CommandContext,
  tell: (done: Omit<Told, 'voice'>) => void,
  later: LaterIds,
  readings: Readings | undefined,
): Promise<void> {
  const steps = planned.map((step) => withLaterOwners(step, node, later));
  const at = context.now().toISOString();
  const minted = new Map<FileStep, Uint8Array>();
  const toKeep: KeptSecret[] = [];
  for (const step of steps) {
    const made = await newValueOf(step, node, context);
    if (!made) continue;
    minted.set(step, made.value);
    toKeep.push({
      module: step.module,
      secret: (step as { secret: string }).secret,
      entry: { value: made.value, origin: made.origin, at },
    });
  }
  if (toKeep.length > 0) await context.store.vault.put(...toKeep);
  // Made ready at once (a restored value is opened off the main thread), taken in order.
  const changes = await Promise.allSettled(
    steps.map((step) => changesOf(step, context, minted, readings)),
  );
  const ready: { step: FileStep; changes: Change[] }[] = [];
  let unready: unknown;
  for (const [index, step] of steps.entries()) {
    const change = changes[index] as PromiseSettledResult<Change[]>;
    if (change.status === 'fulfilled') {
      ready.push({ step, changes: change.value });
      continue;
    }
    if (change.reason instanceof StoreError) throw change.reason;
    unready = change.reason;
    break;
  }
  const applied = await context.machine.apply(ready.flatMap(({ changes }) => changes));
  let made = 0;
  const placed: FileStep[] = [];
  let failure: unknown;
  for (const { step, changes } of ready) {
    if (made + changes.length > applied.done) {
      failure = applied.failure;
      break;
    }
    made += changes.length;
    placed.push(step);
  }
  // A rotation placed: the key it placed is the one in use, no longer rotating.
  const rotated = placed.flatMap((step) =>
    step.do === 'rotate' ? [{ module: step.module, secret: rotatingName(step.secret) }] : [],
  );
  if (rotated.length > 0) await context.store.vault.drop(...rotated);
  for (const step of placed) tell({ step });
  if (failure !== undefined) throw failure;
  if (unready !== undefined) throw unready;
}

/**
 * The value a step puts into the vault before its files are written: a secret minted (a
 * key of its kind, a `tls` secret's key with a certificate the state's CA signs), renewed,
 * or rotated to, which must be the very key the preview named.
 */
async function newValueOf(
  step: FileStep,
  node: string,
  context: CommandContext,
): Promise<{ value: Uint8Array; origin: string } | undefined> {
  if (step.do === 'mint') {
    if (!step.key) return { value: mintSecret(step.bytes), origin: 'minted by berth' };
    const key = await mintKey(step.key.kind, step.key.certificate, context);
    return { value: key, origin: 'minted by berth' };
  }
  if (step.do === 'renew') {
    const key = await mintKey('tls', step.certificate, context);
    return { value: key, origin: 'renewed by berth' };
  }
  if (step.do !== 'rotate') return undefined;
  const rotating = await context.store.vault.get(step.module, rotatingName(step.secret));
  const { readKeySecret } = await loadKeyReading();
  const read = rotating && (await readKeySecret(rotating.value, step.kind, context.now()));
  if (!read || 'refused' in read || read.kid !== step.kid)
    throw new StepFailed(
      `the key rotating for ${step.secret} of ${step.module} on ${node} is no longer the one previewed (kid ${step.kid}): preview again`,
    );
  return {
    value: (rotating as { value: Uint8Array }).value,
    origin: `rotated by berth (kid ${step.kid})`,
  };
}

/** A new key of a kind, as the vault keeps it: for `tls`, with its certificate from the state's CA. */
async function mintKey(
  kind: Parameters<Awaited<ReturnType<typeof loadMint>>['mintKeySecret']>[0],
  certificate: CertificateFile | undefined,
  context: CommandContext,
): Promise<Uint8Array> {
  const { mintKeySecret } = await loadMint();
  if (!certificate) return keyValueBytes((await mintKeySecret(kind)).pem);
  if (!context.ca) throw new StepFailed("berth has no state's CA to sign a certificate with here");
  const minted = await mintKeySecret(kind, {
    ca: await signingCa(await context.ca.need()),
    names: certificate.names,
    days: certificate.days,
    now: context.now(),
  });
  return keyValueBytes(minted.pem, minted.certificate);
}

/**
 * The changes a file step makes on the machine: none for a secret the vault alone keeps;
 * a key secret's PEM at its path, and a `tls` secret's certificate at its own.
 */
async function changesOf(
  step: FileStep,
  context: CommandContext,
  minted: ReadonlyMap<FileStep, Uint8Array>,
  readings: Readings | undefined,
): Promise<Change[]> {
  const { store, catalog } = context;
  const { module } = step;
  switch (step.do) {
    case 'mkdir': {
      const options = {
        ...(step.mode === undefined ? {} : { mode: Number.parseInt(step.mode, 8) }),
        ...(step.uid === undefined ? {} : { uid: step.uid }),
        ...(step.gid === undefined ? {} : { gid: step.gid }),
      };
      return [{ kind: 'directory', path: step.path, options }];
    }
    case 'mint': {
      if (step.inside) return [];
      const value = minted.get(step) as Uint8Array;
      if (!step.key)
        return [{ kind: 'file', path: step.path, data: value, options: writeOptions(step) }];
      return keyFiles(step, value, step.key.certificate);
    }
    case 'renew':
    case 'rotate':
      return keyFiles(step, minted.get(step) as Uint8Array, step.certificate);
    case 'restore': {
      if (step.inside) return [];
      const kept = await store.vault.get(module, step.secret);
      if (!kept) throw new StepFailed(`the vault no longer holds ${step.secret}`);
      const entry = await catalog.entry(module);
      const spec =
        'definition' in entry ? ownValue(entry.definition.secrets, step.secret) : undefined;
      if (!isKeySecretKind(spec?.kind))
        return [{ kind: 'file', path: step.path, data: kept.value, options: writeOptions(step) }];
      return keyFiles(step, kept.value, step.certificate);
    }
    case 'write': {
      const entry = await catalog.entry(module);
      if (!('definition' in entry)) throw new StepFailed(`the definition of ${module} is gone`);
      const file = ownValue(entry.definition.files, step.path);
      if (!file) throw new StepFailed(`the definition of ${module} no longer has ${step.path}`);
      const inputs = await secretInputs(entry.definition, module, file.content, context);
      const data = new TextEncoder().encode(
        renderTemplate(file.content, { ...inputsFor(readings, module), ...inputs }),
      );
      return [{ kind: 'file', path: step.path, data, options: writeOptions(step) }];
    }
  }
}

/** A key secret's files: its private key at its path; a `tls` secret's certificate at its own. */
function keyFiles(
  step: FileStep & { path: string; mode: string },
  value: Uint8Array,
  certificate: CertificateFile | undefined,
): Change[] {
  const { key, certificate: pem } = keyValueOf(value);
  const encode = (text: string) => new TextEncoder().encode(text);
  const changes: Change[] = [
    { kind: 'file', path: step.path, data: encode(key), options: writeOptions(step) },
  ];
  if (certificate && pem !== undefined)
    changes.push({
      kind: 'file',
      path: certificate.path,
      data: encode(pem),
      options: writeOptions(withLater(certificate.attributes, step)),
    });
  return changes;
}

/** A certificate's attributes, with the ids its key's step was given for owners made later. */
function withLater(
  attributes: CertificateFile['attributes'],
  step: { uid?: number; gid?: number; later?: LaterOwners },
): CertificateFile['attributes'] {
  const later = step.later ?? {};
  return {
    ...attributes,
    ...(later.user !== undefined && step.uid !== undefined ? { uid: step.uid } : {}),
    ...(later.group !== undefined && step.gid !== undefined ? { gid: step.gid } : {}),
  };
}

/**
 * What a module's file is rendered with of its secrets, as the vault keeps them now: each
 * one's text (a key's private PEM), each key's public half and certificate, and the
 * state's CA when the file places it.
 */
async function secretInputs(
  definition: ModuleDefinition,
  module: string,
  content: string,
  context: CommandContext,
) {
  const { store } = context;
  const values: Record<string, string> = {};
  const keys: Record<string, PublicHalf> = {};
  const certs: Record<string, string> = {};
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    const kept = await store.vault.get(module, secret);
    if (!kept) continue;
    if (!isKeySecretKind(spec.kind)) {
      values[secret] = secretText(kept.value);
      continue;
    }
    const { readKeySecret } = await loadKeyReading();
    const read: KeyRead | { refused: unknown } = await readKeySecret(kept.value, spec.kind);
    if ('refused' in read) throw new StepFailed(`the vault's ${secret} is no ${spec.kind} key`);
    values[secret] = read.pem;
    keys[secret] = { publicPem: read.publicPem, jwk: JSON.stringify(read.jwk) };
    if (read.certificate) certs[secret] = read.certificate.pem;
  }
  if (!readsOf(content).ca) return { secrets: values, keys, certs };
  if (!context.ca) throw new StepFailed("berth has no state's CA to place here");
  return { secrets: values, keys, certs, ca: (await context.ca.need()).certificate };
}

/** A step that changes nothing on the machine's files: the record, or a hook. */
async function doStep(
  step: Exclude<Step, FileStep | KeepStep>,
  node: string,
  context: CommandContext,
  tell: (done: Omit<Told, 'voice'>) => void,
  readings: Readings | undefined,
): Promise<void> {
  const { store } = context;
  const { module } = step;
  const at = () => context.now().toISOString();
  /** The module's record, changed by `change`; a module not managed yet is managed now. */
  const record = async (change: (managed: Managed) => Managed, assign = false) => {
    const now = await store.record();
    const before: Managed = ownValue(now.managed, module) ?? {
      since: at(),
      via: 'converge',
      started: false,
    };
    const next = withManaged(now, module, change(before));
    await store.saveRecord(assign ? withAssigned(next, [...next.assigned, module]) : next);
  };
  switch (step.do) {
    case 'manage':
      await record(
        (managed) => ({
          ...managed,
          via: step.via ?? managed.via,
          started: step.started,
          ...(step.packages ? { packages: step.packages } : {}),
        }),
        step.via === 'take',
      );
      return tell({ step });
    case 'setup': {
      // Owed since the module's first change (or from an act before): owed no more once it succeeds.
      await record((managed) => owing(managed, 'setup', true));
      const hook = await runHook(node, module, 'setup', step, context, readings);
      await record((managed) => owing(managed, 'setup', false));
      return tell({ step, hook });
    }
    case 'reload': {
      if (step.script === undefined) return tell({ step });
      // Owed until it succeeds: a reload that fails (or is cut) is planned again.
      await record((managed) => owing(managed, 'reload', true));
      const hook = await runHook(
        node,
        module,
        'reload',
        { ...step, script: step.script },
        context,
        readings,
      );
      await record((managed) => owing(managed, 'reload', false));
      return tell({ step, hook });
    }
    case 'start': {
      const hook = await runHook(node, module, 'start', step, context, readings);
      // Started, it runs what is on disk: a reload owed is owed no more.
      await record((managed) => ({ ...owing(managed, 'reload', false), started: true }));
      return tell({ step, hook });
    }
    case 'stop':
      return tell({ step, hook: await runHook(node, module, 'stop', step, context, readings) });
    case 'refresh': {
      const waitMs = context.line.lockTimeout ?? PACKAGE_LOCK_WAIT_MS;
      const refreshed = await context.machine.refreshPackages({ waitMs });
      if (!refreshed.ok)
        throw new StepFailed(
          refreshed.busy
            ? `apt on ${node} is busy (held by ${refreshed.busy.command}, pid ${refreshed.busy.pid}); berth waited ${waitSeconds(waitMs)}s for it to refresh ${node}'s package lists`
            : `refreshing ${node}'s package lists failed: ${refreshed.errors.join(' ')}`,
        );
      return tell({ step });
    }
    case 'unhold': {
      const lifted = await context.machine.unholdStarts();
      if (!lifted.ok)
        throw new StepFailed(
          `removing berth's policy-rc.d from ${node} failed: ${lifted.errors.join(' ')}`,
        );
      await store.saveRecord(withStartsHeld(await store.record(), undefined));
      return tell({ step });
    }
    case 'release':
      await store.saveRecord(withManaged(await store.record(), module, undefined));
      return tell({ step });
  }
}

/** A module's record with a hook owed, or not; the other owed hooks as they were. */
function owing(managed: Managed, hook: Owed, owed: boolean): Managed {
  const { pending = [], ...rest } = managed;
  const others = pending.filter((item) => item !== hook);
  const next = owed ? [...others, hook].sort() : others;
  return next.length > 0 ? { ...rest, pending: next } : rest;
}

type Owed = NonNullable<Managed['pending']>[number];

/** Records that a module's hook is owed, from now until it succeeds. */
async function owe(context: CommandContext, module: string, hook: Owed, owed: boolean) {
  const { store } = context;
  const now = await store.record();
  const managed = ownValue(now.managed, module);
  // A module not managed yet is recorded by its own steps, before its files change.
  if (!managed) return;
  await store.saveRecord(withManaged(now, module, owing(managed, hook, owed)));
}

/**
 * A step whose owner or group its module's packages make, with the ids they were found to
 * have after the install.
 */
function withLaterOwners(step: FileStep, node: string, later: LaterIds): FileStep {
  if (!('later' in step) || !step.later) return step;
  const id = (kind: keyof LaterOwners, name: string | undefined) => {
    if (name === undefined) return {};
    const found = (kind === 'user' ? later.users : later.groups).get(name);
    if (found === undefined)
      throw new StepFailed(
        `${node} has no ${kind} ${name}, which ${step.module}'s packages were to make`,
      );
    return kind === 'user' ? { uid: found } : { gid: found };
  };
  return { ...step, ...id('user', step.later.user), ...id('group', step.later.group) };
}

/** A step's attributes as a machine write takes them. */
function writeOptions(step: { mode: string; uid?: number; gid?: number }): WriteOptions {
  return {
    mode: Number.parseInt(step.mode, 8),
    ...(step.uid === undefined ? {} : { uid: step.uid }),
    ...(step.gid === undefined ? {} : { gid: step.gid }),
  };
}
