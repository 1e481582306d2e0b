import { openAct } from '../commands/act.ts';
import type { ActDeps, Face } from '../commands/act-shapes.ts';
import { declaredFor, toRun } from '../commands/declared.ts';
import { inParallel } from '../commands/in-parallel.ts';
import { shapeOf } from '../commands/table.ts';
import { ConfigError } from '../config/config.ts';
import type { ModuleDefinition } from '../model/catalog.ts';
import type { Code } from '../model/codes.ts';
import type { Settings } from '../model/settings.ts';
import { resolveTarget } from '../model/targets.ts';
import { type ValueShown, valuesShown } from '../model/values-shown.ts';
import {
  type JournalEntry,
  type JournalLine,
  type LockHolder,
  storesCannotOpen,
  storesCode,
} from '../stores/stores.ts';
import { answerOf } from '../words/answer.ts';
import { surveyShown } from '../words/kept-survey.ts';
import { refusalWords } from '../words/refusals.ts';
import type { NodeModules, NodeSurveyed } from './matrix.ts';

/** Why a page could not be drawn, in words, with its code and the status it is answered with. */
export interface Unseen {
  refused: string;
  code: Code;
  status: 404 | 409 | 503;
}

/** A survey this view is making, one at a time: of what, and since when. */
export interface Surveying {
  target: string;
  since: Date;
}

/** The fleet as the stores keep it: what each node runs, and its newest survey. */
export interface FleetShown {
  nodes: Map<string, NodeModules>;
  /** Each group's nodes, by group name; nodes in no group are the page's own section. */
  groups: Record<string, string[]>;
  surveyed: Map<string, NodeSurveyed>;
  now: Date;
  surveying?: Surveying;
}

/** One node as the stores keep it: what it runs, and its newest survey. */
export interface NodeShown extends NodeSurveyed {
  modules: NodeModules;
  /** Its values, each with where it came from, as `berth nodes NODE` shows them. */
  values: ValueShown[];
  now: Date;
  surveying?: Surveying;
}

/** A survey asked: made (each node's kept by the stores), or another under way, or refused. */
export type Surveyed = { made: true } | { busy: Surveying } | Unseen;

/**
 * What the view reads and asks. A page reads the stores and berth.json alone: no node is
 * reached, no lock taken. A survey (`survey`) is a converge preview like any other, made
 * through the act runner as `berth converge TARGET` makes it, and kept as each node's
 * newest survey by the stores; one at a time.
 */
export interface ViewSource {
  fleet(): Promise<FleetShown | Unseen>;
  node(name: string): Promise<NodeShown | Unseen>;
  journal(): Promise<JournalLine[] | Unseen>;
  holders(): Promise<LockHolder[]>;
  survey(target: string): Promise<Surveyed>;
  close(): Promise<void>;
}

/** Node records read at once for the matrix: each is a small file or row. */
const READS_AT_ONCE = 32;

const converge = shapeOf('converge');

/**
 * The view's reads of the stores and berth.json, and its surveys over the act runner, as
 * `berth converge TARGET` makes them (each keeps its digests, so an act copied from a page
 * says what changed since). The actor is the operator who started the view.
 */
export function viewSource(
  deps: ActDeps,
  face: Pick<Face, 'actor' | 'line' | 'signal'>,
  now: () => Date = () => new Date(),
): ViewSource {
  let surveying: Surveying | undefined;

  /** What each node runs and what berth manages there, read from its record without its lock. */
  const modulesOf = async (node: string, settings: Settings): Promise<NodeModules> => {
    const record = await deps.stores.readNode(node);
    const managed = Object.fromEntries(
      Object.entries(record.managed).map(([module, kept]) => [module, { started: kept.started }]),
    );
    const modules = [
      ...new Set([...toRun(record.assigned, declaredFor(settings, node)), ...Object.keys(managed)]),
    ].sort();
    return { modules, managed };
  };

  /** Each node's newest survey, and the acts journaled on it since. */
  const surveyedOf = async (names: readonly string[]) => {
    const surveys = new Map(
      (await deps.stores.readSurveys(names)).map((survey) => [survey.node, surveyShown(survey)]),
    );
    const since = new Map<string, JournalEntry[]>();
    for (const line of await deps.stores.readJournal()) {
      if (!('entry' in line)) continue;
      const { entry } = line;
      const survey = surveys.get(entry.node);
      if (!survey || entry.at <= survey.at || entry.outcome === 'refused') continue;
      since.set(entry.node, [entry, ...(since.get(entry.node) ?? [])]);
    }
    return new Map(
      names.map((node): [string, NodeSurveyed] => {
        const survey = surveys.get(node);
        return [node, { ...(survey ? { survey } : {}), since: since.get(node) ?? [] }];
      }),
    );
  };

  return {
    fleet: () =>
      readingStores(async () => {
        const { settings } = await deps.loadConfig(undefined);
        const names = Object.keys(settings.nodes).sort();
        const held = await inParallel(names, READS_AT_ONCE, (node) => modulesOf(node, settings));
        const nodes = new Map(names.map((node, index) => [node, held[index] as NodeModules]));
        const groups: Record<string, string[]> = {};
        for (const group of Object.keys(settings.groups).sort()) {
          const found = resolveTarget(`@${group}`, { nodes: names, groups: settings.groups });
          groups[group] = found.ok ? found.nodes : [];
        }
        const surveyed = await surveyedOf(names);
        return { nodes, groups, surveyed, now: now(), ...(surveying ? { surveying } : {}) };
      }),
    node: (name) =>
      readingStores(async (): Promise<NodeShown | Unseen> => {
        const { settings, catalog } = await deps.loadConfig(undefined);
        const names = Object.keys(settings.nodes);
        const known = resolveTarget(name, { nodes: names, groups: settings.groups });
        if (!known.ok) {
          const { refusal } = known;
          return { refused: refusalWords(refusal), code: refusal.code, status: 404 };
        }
        const surveyed = (await surveyedOf([name])).get(name) as NodeSurveyed;
        const modules = await modulesOf(name, settings);
        const definitions = new Map<string, ModuleDefinition>();
        for (const module of modules.modules) {
          const entry = await catalog.entry(module);
          if ('definition' in entry) definitions.set(module, entry.definition);
        }
        return {
          modules,
          values: valuesShown(settings, name, definitions),
          ...surveyed,
          now: now(),
          ...(surveying ? { surveying } : {}),
        };
      }),
    journal: () => readingStores(() => deps.stores.readJournal()),
    holders: () => deps.stores.lockHolders(),
    async survey(target) {
      if (surveying) return { busy: surveying };
      const asked: Surveying = { target, since: now() };
      surveying = asked;
      try {
        return await surveyNow(target);
      } finally {
        surveying = undefined;
      }
    },
    close: () => deps.stores.close(),
  };

  /** A converge preview of the target, as the command line makes it: its nodes' surveys kept. */
  async function surveyNow(target: string): Promise<Surveyed> {
    const request = { node: target, module: '', yes: false };
    const opened = await openAct(converge, request, deps, {
      ...face,
      via: 'cli',
      now,
    });
    if (opened.kind !== 'ready') {
      const { refusal } = opened;
      return { refused: refusalWords(refusal), code: refusal.code, status: 503 };
    }
    const outcome = await opened.run();
    const answer = answerOf(outcome);
    if (outcome.storeFailed)
      return {
        refused: answer.refused ?? '',
        code: answer.code ?? 'stores_unavailable',
        status: 503,
      };
    // Refused before any node (berth.json not valid, a node it does not know): no survey.
    if (Object.keys(answer.nodes).length === 0 && answer.refused !== undefined)
      return { refused: answer.refused, code: answer.code ?? 'failed', status: 409 };
    return { made: true };
  }
}

/** A read of the stores or of berth.json, or why it could not be made, in words. */
async function readingStores<T>(read: () => Promise<T | Unseen>): Promise<T | Unseen> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ConfigError)
      return { refused: error.message, code: 'invalid_config', status: 409 };
    return { refused: storesCannotOpen(error), code: storesCode(error), status: 503 };
  }
}
