import { type ModuleDefinition, renderFile, SECRET_PLACEHOLDER } from '../catalog.ts';
import { type Entries, resolveModule, type Unresolved } from '../resolve.ts';
import { secretText } from '../secrets.ts';
import { holdsNothing, type NodeRecord } from '../state.ts';
import { bytesAt, type ModuleSurvey } from '../survey.ts';

/** One thing a converge does to a machine or to berth's own record. */
export type Step =
  | { do: 'create'; module: string; path: string }
  | { do: 'mint'; module: string; secret: string; path: string; bytes: number }
  | { do: 'restore'; module: string; secret: string; path: string }
  | { do: 'keep'; module: string; secret: string; path: string }
  | { do: 'write'; module: string; path: string; mode: string; why: WriteReason }
  | { do: 'start'; module: string; script: string }
  | { do: 'stop'; module: string; script: string }
  | { do: 'manage'; module: string; started: boolean }
  | { do: 'release'; module: string };

/** Why a file is written, as a value: the preview says it in words. */
export type WriteReason =
  | { because: 'install' }
  | { because: 'missing' }
  | { because: 'differs' }
  | { because: 'mode'; was: string }
  | { because: 'carries-minted-secret' };

/** What stands in the way of the act, as a value: the preview says it in words. */
export type Blocker =
  | { because: 'does-not-resolve'; module: string; unresolved: Unresolved }
  | { because: 'needs-not-running'; module: string; needs: string[] }
  | { because: 'held-not-managed'; module: string; held: Held }
  | { because: 'secret-differs'; module: string; secret: string; path: string };

/** What a machine holds of a module berth does not manage, for the blocker's words. */
export type Held =
  | { kind: 'data'; paths: string[] }
  | { kind: 'secret'; names: string[] }
  | { kind: 'file'; paths: string[] };

export type Action = 'install' | 'update' | 'release';

export interface ConvergePlan {
  /** Each module acted on, in the order the act takes them, with its steps. */
  modules: { module: string; action: Action; steps: Step[] }[];
  blockers: Blocker[];
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
  /** The vault's values for the node, by `module/secret`. */
  vault: ReadonlyMap<string, Uint8Array>;
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
  for (const module of modulesInScope(record, filter)) {
    if (!assigned.has(module)) continue;
    const resolution = resolveModule(module, assigned, entries);
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

  for (const module of modulesInScope(record, filter)) {
    const entry = entries.get(module);
    const managed = record.managed[module];
    if (!assigned.has(module)) {
      const definition = entry && 'definition' in entry ? entry.definition : undefined;
      if (definition) definitions.set(module, definition);
      const steps: Step[] = definition?.stop
        ? [{ do: 'stop', module, script: definition.stop }]
        : [];
      plan.modules.push({
        module,
        action: 'release',
        steps: [...steps, { do: 'release', module }],
      });
      continue;
    }
    const resolution = resolveModule(module, assigned, entries);
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
    if (filter !== undefined) {
      // Alone, a module is acted on without the modules it needs: they must be running.
      const needs = definition.needs.filter((need) => !record.managed[need]?.started);
      if (needs.length > 0) {
        plan.blockers.push({ because: 'needs-not-running', module, needs });
        continue;
      }
    }
    const survey = input.surveys.get(module);
    if (!survey) continue;
    if (!managed) {
      if (!holdsNothing(survey.holdings)) {
        plan.blockers.push({ because: 'held-not-managed', module, held: heldOf(survey) });
        continue;
      }
      plan.modules.push({
        module,
        action: 'install',
        steps: installSteps(input, module, definition),
      });
      continue;
    }
    const update = updateSteps(input, module, definition, survey, managed.started);
    desired.set(module, update.desired);
    plan.blockers.push(...update.blockers);
    if (update.steps.length > 0)
      plan.modules.push({ module, action: 'update', steps: update.steps });
  }
  plan.modules = orderForAct(plan.modules, definitions);
  return { plan, desired };
}

/**
 * A fresh install. A secret the vault still holds for the module (it was managed here,
 * released, and its files removed) is restored, never minted over: something else may
 * still use it, and the vault's copy may be the only one.
 */
function installSteps(input: ConvergeInput, module: string, definition: ModuleDefinition): Step[] {
  const steps: Step[] = [{ do: 'manage', module, started: !definition.start }];
  for (const path of definition.data) steps.push({ do: 'create', module, path });
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    steps.push(
      input.vault.has(`${module}/${secret}`)
        ? { do: 'restore', module, secret, path: spec.path }
        : { do: 'mint', module, secret, path: spec.path, bytes: spec.bytes },
    );
  }
  for (const [path, file] of Object.entries(definition.files)) {
    steps.push({
      do: 'write',
      module,
      path,
      mode: normalMode(file.mode),
      why: { because: 'install' },
    });
  }
  if (definition.start) steps.push({ do: 'start', module, script: definition.start });
  return steps;
}

function updateSteps(
  input: ConvergeInput,
  module: string,
  definition: ModuleDefinition,
  survey: ModuleSurvey,
  started: boolean,
) {
  const steps: Step[] = [];
  const blockers: Blocker[] = [];
  const desired = new Map<string, Uint8Array>();
  const values: Record<string, string> = {};
  const toMint = new Set<string>();

  for (const path of definition.data) {
    if (survey.facts.get(path)?.kind === 'missing') steps.push({ do: 'create', module, path });
  }
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    const held = bytesAt(survey.facts, spec.path);
    const kept = input.vault.get(`${module}/${secret}`);
    if (kept) values[secret] = secretText(kept);
    if (!held?.length) {
      if (kept) steps.push({ do: 'restore', module, secret, path: spec.path });
      else {
        steps.push({ do: 'mint', module, secret, path: spec.path, bytes: spec.bytes });
        toMint.add(secret);
      }
    } else if (!kept) {
      steps.push({ do: 'keep', module, secret, path: spec.path });
      values[secret] = secretText(held);
    } else if (!sameBytes(held, kept)) {
      blockers.push({ because: 'secret-differs', module, secret, path: spec.path });
    }
  }
  for (const [path, file] of Object.entries(definition.files)) {
    const mode = normalMode(file.mode);
    const names = [...file.content.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1] as string);
    if (names.some((name) => toMint.has(name))) {
      steps.push({ do: 'write', module, path, mode, why: { because: 'carries-minted-secret' } });
      continue;
    }
    const wanted = new TextEncoder().encode(renderFile(file.content, values));
    desired.set(path, wanted);
    const fact = survey.facts.get(path);
    const held = bytesAt(survey.facts, path);
    if (fact?.kind !== 'file')
      steps.push({ do: 'write', module, path, mode, why: { because: 'missing' } });
    else if (!held || !sameBytes(held, wanted))
      steps.push({ do: 'write', module, path, mode, why: { because: 'differs' } });
    else if (fact.mode !== mode)
      steps.push({ do: 'write', module, path, mode, why: { because: 'mode', was: fact.mode } });
  }
  if (!started && definition.start) steps.push({ do: 'start', module, script: definition.start });
  else if (!started) steps.push({ do: 'manage', module, started: true });
  return { steps, blockers, desired };
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

function needsFirst(
  modules: ConvergePlan['modules'],
  definitions: ReadonlyMap<string, ModuleDefinition>,
): ConvergePlan['modules'] {
  const byName = new Map(modules.map((item) => [item.module, item]));
  const ordered: ConvergePlan['modules'] = [];
  const seen = new Set<string>();
  const visit = (module: string) => {
    if (seen.has(module)) return;
    seen.add(module);
    for (const need of definitions.get(module)?.needs ?? []) visit(need);
    const item = byName.get(module);
    if (item) ordered.push(item);
  };
  for (const module of byName.keys()) visit(module);
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

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/** Modes as four octal digits, the way a survey reports them. */
function normalMode(mode: string): string {
  return mode.padStart(4, '0');
}
