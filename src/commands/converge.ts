import type { ModuleDefinition } from '../model/catalog.ts';
import { isName } from '../model/names.ts';
import type { Readings } from '../model/readings.ts';
import { loadEntries } from '../model/resolve.ts';
import { withStartsHeld } from '../model/state.ts';
import { packagesBasis } from '../packages/packages-basis.ts';
import { fingerprintWith } from '../utils/digest.ts';
import { once } from '../utils/once.ts';
import { ownValue } from '../utils/own-record.ts';
import { type CommandContext, type CommandFunction, refuse } from './context.ts';
import {
  type ConvergePlan,
  modulesInScope,
  modulesReadingValues,
  modulesToSurvey,
  planConverge,
  SEALED,
  showsDiff,
} from './converge-plan.ts';
import { caPlaced, gatherKeys, rotationsAsked } from './gather-keys.ts';
import { gatherReadings, needsFacts } from './gather-readings.ts';
import type { Outcome } from './outcome.ts';
import { type Basis, definitionDigests } from './preview-basis.ts';
import { refreshLists } from './refresh.ts';
import { checkCovered, runCheck } from './steps/check.ts';
import { carryOut } from './steps/engine.ts';
import { gate } from './steps/gate.ts';
import { stepReport } from './steps/report.ts';
import type { CheckOutcome } from './steps/step.ts';
import { surveyModules } from './survey.ts';

/**
 * Brings a node to its assignments: a preview without `yes`; with `yes` and the
 * preview's digest, the same plan made again under the lock and carried out step
 * by step, each step recorded as it is done so that a later converge carries on.
 */
export const converge: CommandFunction = async (request, context) => {
  const { node } = request;
  const filter = request.filter === '' ? undefined : request.filter;
  if (filter !== undefined && !isName(filter))
    return refuse({ kind: 'name', code: 'invalid_name', of: 'module', given: filter });
  // An act with --refresh never reaches here: it is refused before its target (act.ts).
  if (context.line.refresh) {
    const refused = await refreshLists(node, context);
    if (refused) return refused;
  }

  const gathered = await gatherAndPlan(node, filter, context, request.yes);
  if (gathered.refused) return refuse(gathered.refused);
  const { plan, basis, held, readings } = gathered;
  const nothingToDo = plan.modules.length === 0 && plan.blockers.length === 0;
  const gated = await gate(request, context, {
    kind: 'converge',
    plan: coveredPlan(plan),
    basis,
    yesAlone: nothingToDo,
  });
  const report = {
    digest: gated.digest,
    steps: plan.modules.flatMap(({ steps }) => steps.map(stepReport)),
    blockers: plan.blockers,
  };
  if (gated.to === 'preview') {
    const preview = {
      plan,
      digest: gated.digest,
      nothingToDo,
      ...(context.line.refresh ? { refreshed: true as const } : {}),
      ...(basis.facts ? { facts: basis.facts } : {}),
    };
    return { result: { command: 'converge', node, filter, preview }, report };
  }
  if (gated.to === 'refused') return { refusal: gated.refusal, report };
  if (plan.blockers.length > 0)
    return { refusal: { kind: 'blocked', code: 'blocked', node, blockers: plan.blockers }, report };
  // An install berth did not see end left no hold on service starts after all: forgotten.
  if (held === false) await forgetStartsHeld(context);
  if (nothingToDo) return { result: { command: 'converge', node, act: 'nothing-to-do' }, report };
  return act(plan, node, context, report.digest, readings);
};

/**
 * The plan as its digest covers it: a start for a check that fails, by the check's exit;
 * a refresh of the lists, not how old they are (which moves by the second).
 */
function coveredPlan(plan: ConvergePlan) {
  const modules = plan.modules.map((item) => ({
    ...item,
    steps: item.steps.map((step) => {
      if (step.do === 'start' && step.check) return { ...step, check: checkCovered(step.check) };
      if (step.do === 'refresh') {
        const { age, ...covered } = step;
        return { ...covered, neverFetched: age === undefined };
      }
      return step;
    }),
  }));
  return { ...plan, modules };
}

/** Carries the plan out through the step engine: what was done, and where it stopped. */
async function act(
  plan: ConvergePlan,
  node: string,
  context: CommandContext,
  digest: string,
  readings: Readings,
): Promise<Outcome> {
  const carried = await carryOut(plan.modules, node, context, 'converge', readings);
  const report = { digest, steps: carried.told.map(({ step }) => stepReport(step)), blockers: [] };
  const { failure } = carried;
  const result = {
    command: 'converge',
    node,
    act: { told: carried.told, stopped: failure !== undefined },
  } as const;
  if (!failure) return { result, report };
  const { code, module, how, why } = failure;
  const refusal = { kind: 'stopped', code, command: 'converge', node, module, how, why } as const;
  return { result, refusal, report: { ...report, failed: true } };
}

/**
 * Reads what the plan needs (records, catalog, one survey, the vault, the values and facts
 * its modules read), then plans without I/O.
 */
async function gatherAndPlan(
  node: string,
  filter: string | undefined,
  context: CommandContext,
  acting: boolean,
) {
  const { store, catalog, machine } = context;
  const record = await store.record();
  const inScope = modulesInScope(record, filter);
  const entries = await loadEntries(catalog, inScope);
  // Opened only when a file or secret is fingerprinted: modules of packages or data need none.
  const key = once(() => store.vault.fingerprintKey());
  const surveyed = modulesToSurvey(record, entries, filter);
  const rotate = rotationsAsked(context.line.rotate ?? [], surveyed, node);
  if (!(rotate instanceof Set)) return { refused: rotate } as const;
  // Every module in scope with a definition: a released one's stop sees its values and facts too.
  const defined = new Map<string, ModuleDefinition>();
  for (const module of inScope) {
    const entry = entries.get(module);
    if (entry && 'definition' in entry) defined.set(module, entry.definition);
  }
  const facts = [...defined.values()].some(needsFacts);
  const surveyedAll = await surveyModules(machine, surveyed, key, { packages: true, facts });
  const surveys = surveyedAll.modules;
  const read = await gatherReadings(context.settings, node, catalog, defined, surveyedAll.facts);
  // A preview opens only the values its plan reads (each costs an X25519 exchange); an act
  // opens every one first, so that a value berth cannot open refuses it before it writes.
  const vault = new Map<string, Uint8Array | typeof SEALED>(
    (await store.vault.kept()).map((item) => [`${item.module}/${item.secret}`, SEALED]),
  );
  const reading = acting ? undefined : modulesReadingValues(record, surveyed, surveys);
  for (const item of reading?.size === 0 ? [] : await store.vault.all(reading))
    vault.set(`${item.module}/${item.secret}`, item.value);
  const keys = await gatherKeys(surveyed, surveys, vault, read.readings, rotate, {
    acting,
    context,
  });
  const ca = await caPlaced(surveyed, context);
  const checks = await runChecks(node, record, surveyed, context, read.readings);
  const input = {
    node,
    filter,
    record,
    entries,
    surveys,
    vault,
    checks,
    read,
    keys,
    ca,
    ...(context.settings.refresh_after === undefined
      ? {}
      : { refreshAfter: context.settings.refresh_after }),
    ...(context.line.refresh ? { listsRefreshed: true } : {}),
  };
  let { plan, desired } = planConverge(input);
  // A diff shown may hold any value of the node, of any module: every one is opened to
  // mask it, and the plan made again (without I/O) with them all.
  if (showsDiff(plan) && [...vault.values()].some((value) => value === SEALED)) {
    for (const item of await store.vault.all())
      vault.set(`${item.module}/${item.secret}`, item.value);
    ({ plan, desired } = planConverge(input));
  }

  const fingerprints: Record<string, Record<string, string>> = {};
  for (const [module, files] of desired) {
    fingerprints[module] = {};
    for (const [path, bytes] of files)
      fingerprints[module][path] = await fingerprintWith(await key(), bytes);
  }
  const basis: Basis = {
    node,
    scope: filter === undefined ? { command: 'converge' } : { command: 'converge', filter },
    assigned: record.assigned,
    managed: Object.fromEntries(
      Object.entries(record.managed).filter(([module]) => inScope.includes(module)),
    ),
    definitions: await definitionDigests(
      Object.fromEntries(
        inScope.map((module) => {
          const entry = entries.get(module);
          return [
            module,
            entry && 'definition' in entry ? entry.definition : { problem: entry?.problem },
          ];
        }),
      ),
    ),
    survey: Object.fromEntries([...surveys].map(([module, survey]) => [module, survey.holdings])),
    desired: fingerprints,
    checks: Object.fromEntries([...checks].map(([module, check]) => [module, checkCovered(check)])),
  };
  const packages = packagesBasis(surveys, surveyed);
  if (packages) basis.packages = packages;
  // What the plan read besides secrets: a value changed since the preview refuses its act.
  const values = [...read.readings.values].filter(([, given]) => Object.keys(given).length > 0);
  if (values.length > 0) basis.values = Object.fromEntries(values);
  if (facts) basis.facts = read.readings.facts;
  // The key each rotation places, by its kid: an act whose key is not the one previewed is refused.
  if (keys.rotate.size > 0)
    basis.rotating = Object.fromEntries(
      [...keys.rotate].map((id) => [id, keys.rotating.get(id)?.kid ?? '']),
    );
  // Whether berth's hold on service starts is there, when the survey looked.
  const lists = [...surveys.values()].find((survey) => survey.packages)?.packages;
  const held = lists?.manager === 'apt' ? lists.startsHeld !== undefined : undefined;
  return { plan, basis, held, readings: read.readings };
}

/** The node's record no longer says an install may have left berth's hold on service starts. */
async function forgetStartsHeld(context: CommandContext): Promise<void> {
  const record = await context.store.record();
  if (record.startsHeldSince !== undefined)
    await context.store.saveRecord(withStartsHeld(record, undefined));
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
  readings: Readings,
): Promise<Map<string, CheckOutcome>> {
  const checks = new Map<string, CheckOutcome>();
  const running = [...definitions].filter(
    ([module, definition]) => definition.check && ownValue(record.managed, module)?.started,
  );
  if (running.length === 0) return checks;
  const secrets = await context.store.vault.all();
  for (const [module, definition] of running) {
    const hook = { script: definition.check as string, timeout: definition.timeout };
    checks.set(module, await runCheck(node, module, hook, secrets, context, readings));
  }
  return checks;
}
