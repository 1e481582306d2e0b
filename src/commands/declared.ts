import type { Settings } from '../model/settings.ts';
import { withAssigned } from '../model/state.ts';
import { targetCovers } from '../model/targets.ts';
import type { NodeStore } from '../stores/stores.ts';

/** A module berth.json's `run` declares for a node, and the targets that declare it. */
export interface Declared {
  module: string;
  from: string[];
}

/** What berth.json's `run` declares a node is to run, sorted by module. */
export function declaredFor(settings: Pick<Settings, 'run' | 'groups'>, node: string): Declared[] {
  const from = new Map<string, string[]>();
  for (const [target, modules] of Object.entries(settings.run)) {
    if (!targetCovers(target, node, settings.groups)) continue;
    for (const module of modules) from.set(module, [...(from.get(module) ?? []), target]);
  }
  return [...from]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([module, targets]) => ({ module, from: targets }));
}

/** What a node is to run: the union of what was assigned and what berth.json declares, sorted. */
export function toRun(assigned: readonly string[], declared: readonly Declared[]): string[] {
  return [...new Set([...assigned, ...declared.map((item) => item.module)])].sort();
}

/** Where berth.json's `run` names a module for a target, as a field path: `run.@web.0`. */
export function runField(settings: Pick<Settings, 'run'>, target: string, module: string): string {
  return `run.${target}.${(settings.run[target] ?? []).indexOf(module)}`;
}

/**
 * A node's records as a command sees them: it is to run what was assigned and what
 * berth.json declares. Declared modules are never written into its kept assignments: a
 * record saved keeps an assignment only if it was assigned, or is not declared.
 */
export function withDeclared(store: NodeStore, declared: readonly Declared[]): NodeStore {
  if (declared.length === 0) return store;
  const names = new Set(declared.map((item) => item.module));
  let kept = new Set<string>();
  return {
    node: store.node,
    vault: store.vault,
    async record() {
      const record = await store.record();
      kept = new Set(record.assigned);
      return withAssigned(record, [...record.assigned, ...names]);
    },
    saveRecord: (next) =>
      store.saveRecord(
        withAssigned(
          next,
          next.assigned.filter((module) => !names.has(module) || kept.has(module)),
        ),
      ),
    keepPreview: (preview) => store.keepPreview(preview),
    findPreview: (digest) => store.findPreview(digest),
    keepSurvey: (survey) => store.keepSurvey(survey),
    journal: (entry) => store.journal(entry),
    close: () => store.close(),
  };
}
