import type { ModuleDefinition } from '../catalog.ts';
import { renderFile } from '../catalog.ts';
import { shownDiff } from '../diff-shown.ts';
import { fingerprintWith } from '../digest.ts';
import type { Change, Machine, WriteOptions } from '../machines/machine.ts';
import { checkName } from '../names.ts';
import { type Basis, checkDigest, sealPreview } from '../preview.ts';
import { doesNotResolve, loadEntries } from '../resolve.ts';
import { type KeptValue, mintSecret, secretText } from '../secrets.ts';
import { withManaged } from '../state.ts';
import { type KeptSecret, StoreError } from '../stores/stores.ts';
import { secretInside, surveyModules } from '../survey.ts';
import { type CommandContext, type CommandFunction, HOOK_LINE, refuse } from './context.ts';
import {
  type Attributes,
  type Blocker,
  type CheckOutcome,
  type ConvergePlan,
  type Drift,
  modulesInScope,
  modulesToSurvey,
  planConverge,
  type Step,
} from './converge-plan.ts';
import { runClearedHook } from './run-hook.ts';

/**
 * Brings a node to its assignments: a preview without `yes`; with `yes` and the
 * preview's digest, the same plan made again under the lock and carried out step
 * by step, each step recorded as it is done so that a later converge carries on.
 */
export const converge: CommandFunction = async (request, context) => {
  const { node } = request;
  const filter = request.filter === '' ? undefined : request.filter;
  const refusal = filter === undefined ? undefined : checkName('module', filter);
  if (refusal) return refuse(refusal);

  const { plan, basis } = await gatherAndPlan(node, filter, context);
  const digest = await sealPreview(context.store, 'converge', plan, basis, context.now());
  const title = filter ? `converge ${node}, ${filter} alone` : `converge ${node}`;
  const nothingToDo = plan.modules.length === 0 && plan.blockers.length === 0;

  if (!request.yes)
    return { said: describePreview(title, node, plan, nothingToDo, digest, context.fullDiff) };

  if (request.digest !== undefined) {
    const changed = await checkDigest(context.store, request.digest, digest, basis);
    if (changed) return refuse(changed);
  } else if (!nothingToDo) {
    return refuse(
      `a converge acts on a preview: preview it (berth converge ${node}${filter ? ` --filter ${filter}` : ''}), then act with yes and its digest`,
    );
  }
  if (plan.blockers.length > 0) {
    const words = plan.blockers.map((blocker) => describeBlocker(blocker, node));
    return refuse(
      `the act is refused while ${words.length === 1 ? 'a blocker stands' : 'blockers stand'}: ${words.join('; ')}`,
    );
  }
  if (nothingToDo) return { said: `${node} is as assigned: nothing to do` };
  return carryOut(plan, node, context);
};

/** Reads what the plan needs (records, catalog, one survey, the vault), then plans without I/O. */
async function gatherAndPlan(node: string, filter: string | undefined, context: CommandContext) {
  const { store, catalog, machine } = context;
  const record = await store.record();
  const inScope = modulesInScope(record, filter);
  const entries = await loadEntries(catalog, inScope);
  const key = await store.vault.fingerprintKey();
  const surveys = await surveyModules(machine, modulesToSurvey(record, entries, filter), key);
  const vault = new Map(
    (await store.vault.all()).map((item) => [`${item.module}/${item.secret}`, item.value]),
  );
  const checks = await runChecks(node, record, modulesToSurvey(record, entries, filter), context);
  const { plan, desired } = planConverge({
    node,
    filter,
    record,
    entries,
    surveys,
    vault,
    checks,
  });

  const fingerprints: Record<string, Record<string, string>> = {};
  for (const [module, files] of desired) {
    fingerprints[module] = {};
    for (const [path, bytes] of files)
      fingerprints[module][path] = await fingerprintWith(key, bytes);
  }
  const basis: Basis = {
    node,
    scope: filter ? `converge ${node} --filter ${filter}` : `converge ${node}`,
    assigned: record.assigned,
    managed: Object.fromEntries(
      Object.entries(record.managed).filter(([module]) => inScope.includes(module)),
    ),
    definitions: Object.fromEntries(
      inScope.map((module) => {
        const entry = entries.get(module);
        return [
          module,
          entry && 'definition' in entry ? entry.definition : { problem: entry?.problem },
        ];
      }),
    ),
    survey: Object.fromEntries([...surveys].map(([module, survey]) => [module, survey.holdings])),
    desired: fingerprints,
    checks: Object.fromEntries(checks),
  };
  return { plan, basis };
}

/**
 * Runs the `check` of every module berth runs (managed, started, assigned and resolving)
 * in scope: it says whether the module runs, and changes nothing. Its outcome is planned
 * on and covered by the digest; its last line is cleared of secrets.
 */
async function runChecks(
  node: string,
  record: Awaited<ReturnType<CommandContext['store']['record']>>,
  definitions: ReadonlyMap<string, ModuleDefinition>,
  context: CommandContext,
): Promise<Map<string, CheckOutcome>> {
  const checks = new Map<string, CheckOutcome>();
  const running = [...definitions].filter(
    ([module, definition]) => definition.check && record.managed[module]?.started,
  );
  if (running.length === 0) return checks;
  const secrets = await context.store.vault.all();
  for (const [module, definition] of running) {
    checks.set(module, await runCheck(node, module, definition.check as string, secrets, context));
  }
  return checks;
}

/** One module's check, as an outcome: its exit and its last line, cleared of secrets. */
export async function runCheck(
  node: string,
  module: string,
  script: string,
  secrets: readonly KeptValue[],
  context: Pick<CommandContext, 'machine' | 'signal'>,
): Promise<CheckOutcome> {
  const result = await runClearedHook(
    context,
    script,
    { BERTH_NODE: node, BERTH_MODULE: module },
    secrets,
  );
  return { code: result.code, last: result.shown.split('\n').at(-1) ?? '' };
}

function describePreview(
  title: string,
  node: string,
  plan: ConvergePlan,
  nothingToDo: boolean,
  digest: string,
  fullDiff = false,
) {
  const lines = [title];
  for (const { module, action, steps } of plan.modules) {
    lines.push(`${action} ${module}:`);
    for (const step of steps) lines.push(`  ${previewStep(step, node, fullDiff)}`);
  }
  for (const blocker of plan.blockers) lines.push(`blocked: ${describeBlocker(blocker, node)}`);
  if (plan.blockers.length > 0) lines.push('the act will be refused while a blocker stands');
  if (nothingToDo) lines.push(`${node} is as assigned: nothing to do, so yes alone is enough`);
  lines.push(`digest ${digest}`);
  return lines.join('\n');
}

function describeBlocker(blocker: Blocker, node: string): string {
  switch (blocker.because) {
    case 'does-not-resolve':
      return doesNotResolve(blocker.module, node, blocker.unresolved);
    case 'needs-not-running':
      return `${blocker.module} needs ${blocker.needs.join(' and ')}, which berth does not run on ${node} yet: converge ${node} --filter ${blocker.needs[0]} first, or converge ${node} as a whole`;
    case 'held-not-managed': {
      const { held, module } = blocker;
      const what =
        held.kind === 'data'
          ? `${module}'s data (${held.paths.join(', ')})`
          : held.kind === 'secret'
            ? `${module}'s ${counted('secret', held.names)}`
            : `${module}'s ${counted('file', held.paths)}`;
      return `${node} holds ${what} but berth does not manage ${module}: take ${module} first`;
    }
    case 'secret-differs':
      return `secret ${blocker.secret} of ${blocker.module} at ${blocker.path} on ${node} is not the one in berth's vault; berth will not overwrite it: move it aside and berth restores the vault's`;
    case 'link':
      return blocker.words;
    case 'no-such-account':
      return `${blocker.module} names ${blocker.kind === 'user' ? 'owner' : 'group'} ${blocker.name} for ${blocker.path}, but ${node} has no ${blocker.kind} ${blocker.name}: add it on ${node}, or name another in the definition`;
  }
}

/** "secret a", "secrets a and b", "secrets a, b and c". */
function counted(noun: string, names: string[]): string {
  const last = names.at(-1) ?? '';
  if (names.length <= 1) return `${noun} ${last}`;
  return `${noun}s ${names.slice(0, -1).join(', ')} and ${last}`;
}

function previewStep(step: Step, node: string, fullDiff: boolean): string {
  switch (step.do) {
    case 'manage':
      return step.started
        ? 'record that berth manages it'
        : 'record that berth manages it, not yet started';
    case 'create':
      return step.drift
        ? `mend ${step.path}: ${describeDrift(step.drift)}`
        : `create ${step.path}${describeNamed(step)}`;
    case 'mint':
      return step.inside
        ? `mint ${step.secret} into the vault, to be placed in ${step.path}`
        : `mint ${step.secret} into the vault and write it to ${step.path}`;
    case 'restore':
      return step.drift
        ? `rewrite ${step.secret} from the vault to ${step.path} (${describeAttributes(step)}): ${describeDrift(step.drift)}`
        : `restore ${step.secret} from the vault to ${step.path}`;
    case 'keep':
      return `read ${step.secret} into the vault from ${step.path}${step.match === undefined ? '' : ' (inside it)'}`;
    case 'write': {
      const why =
        step.why.because === 'missing'
          ? ': it is missing'
          : step.why.because === 'differs'
            ? ': it differs from what berth writes'
            : step.why.because === 'drift'
              ? `: ${describeDrift(step.why.drift)}`
              : step.why.because === 'carries-minted-secret'
                ? ': it carries a secret berth is to mint'
                : '';
      const diff = step.why.because === 'differs' ? step.why.diff : [];
      return [
        `write ${step.path} (${describeAttributes(step)})${why}`,
        ...shownDiff(diff, fullDiff).map((line) => `    ${line}`),
      ].join('\n');
    }
    case 'start':
      return step.check
        ? `start ${step.module}: its check fails (exit ${step.check.code}${step.check.last ? `: ${step.check.last}` : ''}); run start: ${step.script}`
        : `run start: ${step.script}`;
    case 'reload':
      return step.script === undefined
        ? 'no reload: the change is live at the next start'
        : `run reload: ${step.script}`;
    case 'stop':
      return `run stop: ${step.script}`;
    case 'release':
      return `stop managing it; its data, secrets and files stay on ${node}`;
  }
}

/** The mode a file is written with; an owner that drifted is named by describeDrift. */
function describeAttributes(step: Attributes): string {
  return `mode ${step.mode}`;
}

/** A new directory's named mode and owner, when the definition names any. */
function describeNamed(step: { mode?: string; uid?: number; gid?: number }): string {
  const parts: string[] = [];
  if (step.mode !== undefined) parts.push(`mode ${step.mode}`);
  if (step.uid !== undefined) parts.push(`owner ${step.uid}`);
  if (step.gid !== undefined) parts.push(`group ${step.gid}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

/** "its owner is 0, not git (1001); its mode is 0644, not 0640". */
function describeDrift(drift: readonly Drift[]): string {
  return drift.map((item) => `its ${item.what} is ${item.was}, not ${item.want}`).join('; ');
}

/**
 * Carries out the plan in order; the first failing step stops it, with what was done said.
 * A module's consecutive steps that change files on the machine go as one batch (one round
 * trip over ssh): a stop asked for is heeded before a batch, not within it.
 */
async function carryOut(plan: ConvergePlan, node: string, context: CommandContext) {
  const said: string[] = [];
  const tell = (done: string) => {
    for (const line of done.split('\n')) {
      said.push(line);
      context.progress?.(line);
    }
  };
  for (const { module, steps } of plan.modules) {
    for (const turn of turnsOf(steps)) {
      if (context.signal?.aborted) {
        return refuse(
          `converge of ${node} stopped before ${module}'s next step: ${stopReason(context.signal)}`,
          said.join('\n'),
        );
      }
      try {
        if (Array.isArray(turn)) await doChanges(turn, context, tell);
        else tell(await doStep(turn, node, context));
      } catch (error) {
        if (error instanceof StoreError) throw error;
        return refuse(
          `converge of ${node} stopped at ${module}: ${(error as Error).message}`,
          said.join('\n'),
        );
      }
    }
  }
  said.push(`${node} is as assigned`);
  return { said: said.join('\n') };
}

/** A step of a module's files: a directory, a secret minted or restored, a file written. */
type FileStep = Step & { do: 'create' | 'mint' | 'restore' | 'write' };

function changesFiles(step: Step): step is FileStep {
  return step.do === 'create' || step.do === 'mint' || step.do === 'restore' || step.do === 'write';
}

/** A module's steps in turns: a step alone, or a run of steps that change files. */
function turnsOf(steps: readonly Step[]): (Exclude<Step, FileStep> | FileStep[])[] {
  const turns: (Exclude<Step, FileStep> | FileStep[])[] = [];
  for (const step of steps) {
    const last = turns.at(-1);
    if (!changesFiles(step)) turns.push(step);
    else if (Array.isArray(last)) last.push(step);
    else turns.push([step]);
  }
  return turns;
}

/**
 * Steps that change files, as one batch: the secrets it mints put into the vault first,
 * in one write (so that a file carrying one is rendered with it), then each step made
 * ready in order, then all made on the machine at once. Each step done is told; the
 * first that was not throws. A batch that stops leaves the secrets minted for its later
 * files in the vault, as a mint whose write failed does: the next converge restores them
 * rather than minting anew.
 */
async function doChanges(
  steps: readonly FileStep[],
  context: CommandContext,
  tell: (done: string) => void,
): Promise<void> {
  const at = context.now().toISOString();
  const minted = new Map<FileStep, Uint8Array>();
  const toKeep: KeptSecret[] = [];
  for (const step of steps) {
    if (step.do !== 'mint') continue;
    const value = mintSecret(step.bytes);
    minted.set(step, value);
    toKeep.push({
      module: step.module,
      secret: step.secret,
      entry: { value, origin: 'minted by berth', at },
    });
  }
  if (toKeep.length > 0) await context.store.vault.put(...toKeep);
  const ready: Ready[] = [];
  let unready: unknown;
  for (const step of steps) {
    try {
      ready.push(await makeReady(step, context, minted));
    } catch (error) {
      if (error instanceof StoreError) throw error;
      unready = error;
      break;
    }
  }
  await applyReady(context.machine, ready, tell);
  if (unready !== undefined) throw unready;
}

/** A step made ready: the change it makes on the machine, if any, and its words once done. */
export interface Ready {
  change?: Change;
  done: string;
}

/**
 * Makes the ready steps' changes on the machine in one batch, then tells each step done,
 * in order, up to the first whose change was not made: its failure throws.
 */
export async function applyReady(
  machine: Machine,
  ready: readonly Ready[],
  tell: (done: string) => void,
): Promise<void> {
  const applied = await machine.apply(ready.flatMap(({ change }) => (change ? [change] : [])));
  let made = 0;
  for (const { change, done } of ready) {
    if (change) {
      if (made === applied.done) throw applied.failure;
      made++;
    }
    tell(done);
  }
}

async function makeReady(
  step: FileStep,
  context: CommandContext,
  minted: ReadonlyMap<FileStep, Uint8Array>,
): Promise<Ready> {
  const { store, catalog } = context;
  const { module } = step;
  switch (step.do) {
    case 'create': {
      const options = {
        ...(step.mode === undefined ? {} : { mode: Number.parseInt(step.mode, 8) }),
        ...(step.uid === undefined ? {} : { uid: step.uid }),
        ...(step.gid === undefined ? {} : { gid: step.gid }),
      };
      return {
        change: { kind: 'directory', path: step.path, options },
        done: step.drift ? `mended ${step.path}` : `created ${step.path}`,
      };
    }
    case 'mint': {
      const value = minted.get(step) as Uint8Array;
      if (step.inside) return { done: `minted ${step.secret} into the vault, for ${step.path}` };
      return {
        change: { kind: 'file', path: step.path, data: value, options: writeOptions(step) },
        done: `minted ${step.secret} into the vault and wrote it to ${step.path}`,
      };
    }
    case 'restore': {
      const kept = await store.vault.get(module, step.secret);
      if (!kept) throw new Error(`the vault no longer holds ${step.secret}`);
      return {
        change: { kind: 'file', path: step.path, data: kept.value, options: writeOptions(step) },
        done: step.drift
          ? `rewrote ${step.secret} to ${step.path}, mending its owner and mode`
          : `restored ${step.secret} from the vault to ${step.path}`,
      };
    }
    case 'write': {
      const entry = await catalog.entry(module);
      if (!('definition' in entry)) throw new Error(`the definition of ${module} is gone`);
      const file = entry.definition.files[step.path];
      if (!file) throw new Error(`the definition of ${module} no longer has ${step.path}`);
      const values: Record<string, string> = {};
      for (const secret of Object.keys(entry.definition.secrets)) {
        const kept = await store.vault.get(module, secret);
        if (kept) values[secret] = secretText(kept.value);
      }
      const data = new TextEncoder().encode(renderFile(file.content, values));
      return {
        change: { kind: 'file', path: step.path, data, options: writeOptions(step) },
        done: `wrote ${step.path}`,
      };
    }
  }
}

/** A step that changes nothing on the machine's files: the record, the vault, a hook. */
async function doStep(
  step: Exclude<Step, FileStep>,
  node: string,
  context: CommandContext,
): Promise<string> {
  const { store, machine } = context;
  const { module } = step;
  const at = () => context.now().toISOString();
  const record = async (started: boolean) => {
    const now = await store.record();
    const before = now.managed[module];
    await store.saveRecord(
      withManaged(now, module, {
        since: before?.since ?? at(),
        via: before?.via ?? 'converge',
        started,
      }),
    );
  };
  switch (step.do) {
    case 'manage':
      await record(step.started);
      return `berth manages ${module} on ${node}`;
    case 'keep': {
      const facts = await machine.survey([{ path: step.path, read: true }]);
      const fact = facts.get(step.path);
      const bytes = fact?.kind === 'file' ? fact.bytes : undefined;
      const value = bytes && step.match !== undefined ? secretInside(bytes, step.match) : bytes;
      if (!value?.length) throw new Error(`${step.secret} is gone from ${step.path} on ${node}`);
      await store.vault.put({
        module,
        secret: step.secret,
        entry: { value, origin: `found on ${node} at ${step.path}`, at: at() },
      });
      return `read ${step.secret} into the vault from ${step.path}`;
    }
    case 'reload':
      if (step.script === undefined)
        return `no reload for ${module}: the change is live at its next start`;
      return runStep(node, module, 'reload', step.script, context);
    case 'start':
    case 'stop': {
      const done = await runStep(node, module, step.do, step.script, context);
      if (step.do === 'start') await record(true);
      return done;
    }
    case 'release':
      await store.saveRecord(withManaged(await store.record(), module, undefined));
      return `released ${module}: berth no longer manages it on ${node}; its data, secrets and files stay`;
  }
}

/** Runs a module's start, stop or reload; a failure or a stop by berth throws, in words. */
async function runStep(
  node: string,
  module: string,
  hook: 'start' | 'stop' | 'reload',
  script: string,
  context: CommandContext,
): Promise<string> {
  const secrets = await context.store.vault.all();
  const tell = context.output;
  tell?.(`running ${hook} of ${module} …`);
  const { code, shown } = await runClearedHook(
    context,
    script,
    { BERTH_NODE: node, BERTH_MODULE: module },
    secrets,
    tell && ((line) => tell(`  ${line}`)),
  );
  if (context.signal?.aborted) {
    throw new Error(`${hook} of ${module} was stopped: ${stopReason(context.signal)}`);
  }
  if (code !== 0) {
    const output = shown ? `: ${shown}` : '';
    throw new Error(`${hook} of ${module} failed (exit ${code})${output}`);
  }
  // Its last lines stay in said, so in the journal: cleared of secrets.
  const last = shown
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-HOOK_LINES_KEPT);
  return [`ran ${hook} of ${module}`, ...last.map((line) => `${HOOK_LINE}${line}`)].join('\n');
}

/** How many of a hook's last lines said (and so the journal) keeps. */
const HOOK_LINES_KEPT = 5;

/** A step's attributes as a machine write takes them. */
function writeOptions(step: Attributes): WriteOptions {
  return {
    mode: Number.parseInt(step.mode, 8),
    ...(step.uid === undefined ? {} : { uid: step.uid }),
    ...(step.gid === undefined ? {} : { gid: step.gid }),
  };
}

/** Why an act was told to stop, in words (the abort reason, when it is text). */
function stopReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'berth was told to stop';
}
