import { type ModuleDefinition, renderFile, SECRET_PLACEHOLDER } from '../catalog.ts';
import { fingerprintWith } from '../digest.ts';
import type { Machine } from '../machines/machine.ts';
import type { Basis } from '../preview.ts';
import { doesNotResolve, resolveModule } from '../resolve.ts';
import { secretText } from '../secrets.ts';
import { assignedTo, type Holdings, holdsNothing, managedOn } from '../state.ts';
import type { Stores } from '../stores/stores.ts';
import { surveyModule } from '../survey.ts';

/** One thing a converge does to a machine or to berth's own record. */
export type Step =
  | { do: 'create'; module: string; path: string }
  | { do: 'mint'; module: string; secret: string; path: string; bytes: number }
  | { do: 'restore'; module: string; secret: string; path: string }
  | { do: 'keep'; module: string; secret: string; path: string }
  | { do: 'write'; module: string; path: string; mode: string; why: string }
  | { do: 'start'; module: string; script: string }
  | { do: 'stop'; module: string; script: string }
  | { do: 'manage'; module: string; started: boolean }
  | { do: 'release'; module: string };

export interface ConvergePlan {
  /** Each module acted on, in the order the act takes them, with its steps. */
  modules: { module: string; action: 'install' | 'update' | 'release'; steps: Step[] }[];
  blockers: string[];
}

/**
 * Surveys the node's machine now and plans, module by module: install what is
 * assigned and absent, update what berth manages, release what is managed and no
 * longer assigned, and a blocker for anything it must not touch.
 */
export async function planConverge(
  stores: Stores,
  machine: Machine,
  node: string,
  filter: string | undefined,
): Promise<{ plan: ConvergePlan; basis: Basis }> {
  const state = stores.state();
  const assigned = assignedTo(state, node);
  const managed = managedOn(state, node);
  const inScope = (module: string) => filter === undefined || module === filter;
  const modules = [...new Set([...assigned, ...Object.keys(managed)])].filter(inScope).sort();
  const key = await stores.vault.fingerprintKey();

  const desired: Record<string, unknown> = {};
  const basis: Basis = {
    node,
    scope: filter ? `converge ${node} --filter ${filter}` : `converge ${node}`,
    assigned,
    managed: Object.fromEntries(Object.entries(managed).filter(([module]) => inScope(module))),
    definitions: {},
    survey: {},
    desired,
  };
  const plan: ConvergePlan = { modules: [], blockers: [] };
  const definitions = new Map<string, ModuleDefinition>();

  for (const module of modules) {
    const entry = await stores.catalog.entry(module);
    basis.definitions[module] =
      'definition' in entry ? entry.definition : { problem: entry.problem };
    const record = managed[module];
    if (!assigned.includes(module)) {
      if ('definition' in entry) definitions.set(module, entry.definition);
      const stop = 'definition' in entry ? entry.definition.stop : undefined;
      const steps: Step[] = stop ? [{ do: 'stop', module, script: stop }] : [];
      plan.modules.push({
        module,
        action: 'release',
        steps: [...steps, { do: 'release', module }],
      });
      continue;
    }
    const resolution = await resolveModule(module, node, new Set(assigned), stores.catalog);
    if (!resolution.ok) {
      plan.blockers.push(doesNotResolve(module, resolution.problem));
      continue;
    }
    const definition = resolution.definition;
    definitions.set(module, definition);
    if (filter !== undefined) {
      // Alone, a module is acted on without the modules it needs: they must be running.
      const missing = definition.needs.filter((need) => !managed[need]?.started);
      if (missing.length > 0) {
        plan.blockers.push(
          `${module} needs ${missing.join(' and ')}, which berth does not run on ${node} yet: converge ${node} --filter ${missing[0]} first, or converge ${node} as a whole`,
        );
        continue;
      }
    }
    const holdings = await surveyModule(machine, definition, key);
    basis.survey[module] = holdings;
    if (!record) {
      if (!holdsNothing(holdings)) {
        plan.blockers.push(
          `${node} holds ${describeHeld(module, holdings)} but berth does not manage ${module}: take ${module} first`,
        );
        continue;
      }
      plan.modules.push({
        module,
        action: 'install',
        steps: installSteps(stores, node, module, definition),
      });
      continue;
    }
    const update = await updateSteps(
      stores,
      machine,
      node,
      module,
      definition,
      holdings,
      key,
      record.started,
    );
    desired[module] = update.desired;
    plan.blockers.push(...update.blockers);
    if (update.steps.length > 0)
      plan.modules.push({ module, action: 'update', steps: update.steps });
  }
  plan.modules = orderForAct(plan.modules, definitions);
  return { plan, basis };
}

/**
 * A fresh install. A secret the vault still holds for the module (it was managed here,
 * released, and its files removed) is restored, never minted over: something else may
 * still use it, and the vault's copy may be the only one.
 */
function installSteps(
  stores: Stores,
  node: string,
  module: string,
  definition: ModuleDefinition,
): Step[] {
  const steps: Step[] = [{ do: 'manage', module, started: !definition.start }];
  for (const path of definition.data) steps.push({ do: 'create', module, path });
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    steps.push(
      stores.vault.get(node, module, secret)
        ? { do: 'restore', module, secret, path: spec.path }
        : { do: 'mint', module, secret, path: spec.path, bytes: spec.bytes },
    );
  }
  for (const [path, file] of Object.entries(definition.files)) {
    steps.push({ do: 'write', module, path, mode: normalMode(file.mode), why: '' });
  }
  if (definition.start) steps.push({ do: 'start', module, script: definition.start });
  return steps;
}

async function updateSteps(
  stores: Stores,
  machine: Machine,
  node: string,
  module: string,
  definition: ModuleDefinition,
  holdings: Holdings,
  key: Uint8Array,
  started: boolean,
) {
  const steps: Step[] = [];
  const blockers: string[] = [];
  const desired: Record<string, string> = {};
  const values: Record<string, string> = {};
  const toMint = new Set<string>();

  for (const item of holdings.data) {
    if (!item.found && (await machine.inspect(item.path)).kind === 'missing') {
      steps.push({ do: 'create', module, path: item.path });
    }
  }
  for (const [secret, spec] of Object.entries(definition.secrets)) {
    const held = holdings.secrets[secret];
    const kept = stores.vault.get(node, module, secret);
    if (kept) values[secret] = secretText(kept.value);
    if (!held?.found) {
      if (kept) steps.push({ do: 'restore', module, secret, path: spec.path });
      else {
        steps.push({ do: 'mint', module, secret, path: spec.path, bytes: spec.bytes });
        toMint.add(secret);
      }
    } else if (!kept) {
      steps.push({ do: 'keep', module, secret, path: spec.path });
      const value = await machine.read(spec.path);
      if (value) values[secret] = secretText(value);
    } else if (held.fingerprint !== (await fingerprintWith(key, kept.value))) {
      blockers.push(
        `secret ${secret} of ${module} at ${spec.path} on ${node} is not the one in berth's vault; berth will not overwrite it: move it aside and berth restores the vault's`,
      );
    }
  }
  for (const [path, file] of Object.entries(definition.files)) {
    const mode = normalMode(file.mode);
    const held = holdings.files[path];
    const names = [...file.content.matchAll(SECRET_PLACEHOLDER)].map((match) => match[1] as string);
    if (names.some((name) => toMint.has(name))) {
      steps.push({
        do: 'write',
        module,
        path,
        mode,
        why: ': it carries a secret berth is to mint',
      });
      continue;
    }
    const wanted = await fingerprintWith(
      key,
      new TextEncoder().encode(renderFile(file.content, values)),
    );
    desired[path] = wanted;
    if (!held?.found) steps.push({ do: 'write', module, path, mode, why: ': it is missing' });
    else if (held.fingerprint !== wanted)
      steps.push({ do: 'write', module, path, mode, why: ': it differs from what berth writes' });
    else if (held.mode !== mode)
      steps.push({ do: 'write', module, path, mode, why: `: its mode is ${held.mode}` });
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
  definitions: Map<string, ModuleDefinition>,
): ConvergePlan['modules'] {
  const releases = modules.filter((item) => item.action === 'release');
  const rest = modules.filter((item) => item.action !== 'release');
  return [...needsFirst(releases, definitions).reverse(), ...needsFirst(rest, definitions)];
}

function needsFirst(
  modules: ConvergePlan['modules'],
  definitions: Map<string, ModuleDefinition>,
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

function describeHeld(module: string, holdings: Holdings): string {
  const data = holdings.data.filter((item) => item.found).map((item) => item.path);
  if (data.length > 0) return `${module}'s data (${data.join(', ')})`;
  const secrets = Object.entries(holdings.secrets).filter(([, secret]) => secret.found);
  if (secrets.length > 0)
    return `${module}'s ${counted(
      'secret',
      secrets.map(([name]) => name),
    )}`;
  const files = Object.entries(holdings.files).filter(([, file]) => file.found);
  return `${module}'s ${counted(
    'file',
    files.map(([path]) => path),
  )}`;
}

/** "secret a", "secrets a and b", "secrets a, b and c". */
function counted(noun: string, names: string[]): string {
  const last = names.at(-1) ?? '';
  if (names.length <= 1) return `${noun} ${last}`;
  return `${noun}s ${names.slice(0, -1).join(', ')} and ${last}`;
}

/** Modes as four octal digits, the way a survey reports them. */
function normalMode(mode: string): string {
  return mode.padStart(4, '0');
}
