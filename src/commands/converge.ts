import type { ModuleDefinition } from '../catalog.ts';
import { fingerprintWith } from '../digest.ts';
import { checkName } from '../names.ts';
import type { Basis } from '../preview.ts';
import type { Outcome } from '../request.ts';
import { doesNotResolve, loadEntries } from '../resolve.ts';
import type { BlockerReport } from '../result.ts';
import { surveyModules } from '../survey.ts';
import { type CommandContext, type CommandFunction, refuse } from './context.ts';
import {
  type Blocker,
  type ConvergePlan,
  modulesInScope,
  modulesToSurvey,
  planConverge,
} from './converge-plan.ts';
import { runCheck } from './steps/check.ts';
import { carryOut } from './steps/engine.ts';
import { gate } from './steps/gate.ts';
import { noSuchAccountWords } from './steps/owners.ts';
import { stepReport } from './steps/report.ts';
import type { CheckOutcome } from './steps/step.ts';
import { previewWords, toldLines } from './steps/words.ts';

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
  const nothingToDo = plan.modules.length === 0 && plan.blockers.length === 0;
  const gated = await gate(request, context, {
    kind: 'converge',
    plan,
    basis,
    yesAlone: nothingToDo,
  });
  const report = {
    digest: gated.digest,
    steps: plan.modules.flatMap(({ steps }) => steps.map(stepReport)),
    blockers: plan.blockers.map((blocker) => blockerReport(blocker, node)),
  };
  if (gated.to === 'preview') {
    const title = filter ? `converge ${node}, ${filter} alone` : `converge ${node}`;
    const fullDiff = context.fullDiff ?? false;
    return {
      said: describePreview(title, node, plan, { nothingToDo, digest: gated.digest, fullDiff }),
      report,
    };
  }
  if (gated.to === 'refused') return { said: '', error: gated.error, report };
  if (plan.blockers.length > 0) {
    const words = report.blockers.map((blocker) => blocker.words);
    return {
      said: '',
      error: `the act is refused while ${words.length === 1 ? 'a blocker stands' : 'blockers stand'}: ${words.join('; ')}`,
      report,
    };
  }
  if (nothingToDo) return { said: `${node} is as assigned: nothing to do`, report };
  return act(plan, node, context, report.digest);
};

/** Carries the plan out through the step engine; said holds what was done, error where it stopped. */
async function act(
  plan: ConvergePlan,
  node: string,
  context: CommandContext,
  digest: string,
): Promise<Outcome> {
  const carried = await carryOut(plan.modules, node, context, 'converge');
  const said = carried.told.flatMap((told) => toldLines(told, node));
  const report = { digest, steps: carried.told.map(({ step }) => stepReport(step)), blockers: [] };
  const { failure } = carried;
  if (!failure) {
    const last = `${node} is as assigned`;
    return { said: [...said, last].join('\n'), report, untold: last };
  }
  const error =
    failure.how === 'stopped'
      ? `converge of ${node} stopped before ${failure.module}'s next step: ${failure.why}`
      : `converge of ${node} stopped at ${failure.module}: ${failure.why}`;
  return { said: said.join('\n'), error, report: { ...report, failed: true }, untold: '' };
}

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
    scope: filter === undefined ? { command: 'converge' } : { command: 'converge', filter },
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

function describePreview(
  title: string,
  node: string,
  plan: ConvergePlan,
  { nothingToDo, digest, fullDiff }: { nothingToDo: boolean; digest: string; fullDiff: boolean },
) {
  const lines = [title];
  for (const { module, action, steps } of plan.modules) {
    lines.push(`${action} ${module}:`);
    for (const step of steps) lines.push(`  ${previewWords(step, node, fullDiff)}`);
  }
  for (const blocker of plan.blockers) lines.push(`blocked: ${describeBlocker(blocker, node)}`);
  if (plan.blockers.length > 0) lines.push('the act will be refused while a blocker stands');
  if (nothingToDo) lines.push(`${node} is as assigned: nothing to do, so yes alone is enough`);
  lines.push(`digest ${digest}`);
  return lines.join('\n');
}

/** A blocker in the typed result: its kind, module and path, and its words. */
function blockerReport(blocker: Blocker, node: string): BlockerReport {
  const report: BlockerReport = {
    kind: blocker.because,
    module: blocker.module,
    words: describeBlocker(blocker, node),
  };
  if ('path' in blocker) report.path = blocker.path;
  return report;
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
      return noSuchAccountWords(blocker, node);
  }
}

/** "secret a", "secrets a and b", "secrets a, b and c". */
function counted(noun: string, names: string[]): string {
  const last = names.at(-1) ?? '';
  if (names.length <= 1) return `${noun} ${last}`;
  return `${noun}s ${names.slice(0, -1).join(', ')} and ${last}`;
}
