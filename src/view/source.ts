import type { ModuleDefinition } from '../catalog.ts';
import type { Code } from '../codes.ts';
import { openAct } from '../commands/act.ts';
import type { ActDeps } from '../commands/act-shapes.ts';
import { answerOf } from '../commands/answer.ts';
import { inParallel } from '../commands/in-parallel.ts';
import { commands } from '../commands/table.ts';
import { ConfigError } from '../config/config.ts';
import { declaredFor, toRun } from '../declared.ts';
import type { CommandAnswer } from '../result.ts';
import {
  type JournalLine,
  type LockHolder,
  storesCannotOpen,
  storesCode,
} from '../stores/stores.ts';
import { resolveTarget } from '../targets.ts';
import { type ValueShown, valuesShown } from '../values-shown.ts';
import type { NodeModules } from './matrix.ts';

/** Why a page could not be drawn, in words, with its code and the status it is answered with. */
export interface Unseen {
  refused: string;
  code: Code;
  status: 404 | 409 | 503;
}

/** A converge preview of the whole inventory, with what each node runs, and when it was made. */
export interface FleetSurvey {
  answer: CommandAnswer;
  nodes: Map<string, NodeModules>;
  /** Each group's nodes, by group name; nodes in no group are the page's own section. */
  groups: Record<string, string[]>;
  at: Date;
  ms: number;
}

/** One node's converge preview, whole: its words with each file's full diff, and its typed part. */
export interface NodeSurvey {
  answer: CommandAnswer;
  modules: NodeModules;
  /** Its values, each with where it came from, as `berth nodes NODE` shows them. */
  values: ValueShown[];
  at: Date;
}

/** What the view reads, all through the command functions and the stores, never writing a record of its own. */
export interface ViewSource {
  fleet(): Promise<FleetSurvey | Unseen>;
  node(name: string): Promise<NodeSurvey | Unseen>;
  journal(): Promise<JournalLine[] | Unseen>;
  holders(): Promise<LockHolder[]>;
  close(): Promise<void>;
}

/** Node records read at once for the matrix: each is a small file or row. */
const READS_AT_ONCE = 32;

const converge = commands.find(
  (command) => command.name === 'converge',
) as (typeof commands)[number];

/**
 * The view's reads over the act runner, as the command line's `converge TARGET --json`
 * makes them: the same command function, the same answer. A preview takes each node's lock
 * while it surveys, and keeps its digest, as every preview does (an act copied from the
 * page then says what changed since). Two pages asking for the fleet at once share one survey.
 */
export function viewSource(deps: ActDeps, face: { actor: string; lockWaitMs: number }): ViewSource {
  let surveying: Promise<FleetSurvey | Unseen> | undefined;

  const preview = async (node: string, fullDiff: boolean) => {
    const request = { node, module: '', yes: false };
    const opened = await openAct(converge, request, deps, {
      actor: face.actor,
      via: 'cli',
      mint: [],
      fullDiff,
      lockWaitMs: face.lockWaitMs,
    });
    if (opened.kind !== 'ready')
      return { refused: opened.refused, code: opened.code, status: 503 } as const;
    const outcome = await opened.run();
    const answer = answerOf(outcome);
    if (outcome.storeFailed)
      return {
        refused: answer.refused ?? '',
        code: answer.code ?? 'stores_unavailable',
        status: 503,
      } as const;
    return answer;
  };

  /** What each node runs and what berth manages there, read from its record without its lock. */
  const modulesOf = async (node: string, settings: Parameters<typeof declaredFor>[0]) => {
    const record = await deps.stores.readNode(node);
    const managed = Object.fromEntries(
      Object.entries(record.managed).map(([module, kept]) => [module, { started: kept.started }]),
    );
    const modules = [
      ...new Set([...toRun(record.assigned, declaredFor(settings, node)), ...Object.keys(managed)]),
    ].sort();
    return { modules, managed };
  };

  const survey = async (): Promise<FleetSurvey | Unseen> => {
    const started = performance.now();
    const at = new Date();
    const answer = await preview('@all', false);
    if ('status' in answer) return answer;
    if (Object.keys(answer.nodes).length === 0 && answer.refused !== undefined)
      return { refused: answer.refused, code: answer.code ?? 'failed', status: 409 };
    return readingStores(async () => {
      const { settings } = await deps.loadConfig(undefined);
      const names = Object.keys(settings.nodes).sort();
      const held = await inParallel(names, READS_AT_ONCE, (node) => modulesOf(node, settings));
      const nodes = new Map(names.map((node, index) => [node, held[index] as NodeModules]));
      const groups: Record<string, string[]> = {};
      for (const group of Object.keys(settings.groups).sort()) {
        const found = resolveTarget(`@${group}`, { nodes: names, groups: settings.groups });
        groups[group] = found.ok ? found.nodes : [];
      }
      return { answer, nodes, groups, at, ms: performance.now() - started };
    });
  };

  return {
    fleet() {
      surveying ??= survey().finally(() => {
        surveying = undefined;
      });
      return surveying;
    },
    async node(name) {
      const at = new Date();
      const answer = await preview(name, true);
      if ('status' in answer) return answer;
      if (!answer.nodes[name]) {
        const unknown = answer.code === 'unknown_node' || answer.code === 'invalid_name';
        return {
          refused: answer.refused ?? '',
          code: answer.code ?? 'failed',
          status: unknown ? 404 : 409,
        };
      }
      return readingStores(async () => {
        const { settings, catalog } = await deps.loadConfig([name]);
        const modules = await modulesOf(name, settings);
        const definitions = new Map<string, ModuleDefinition>();
        for (const module of modules.modules) {
          const entry = await catalog.entry(module);
          if ('definition' in entry) definitions.set(module, entry.definition);
        }
        return { answer, modules, values: valuesShown(settings, name, definitions), at };
      });
    },
    journal: () => readingStores(() => deps.stores.readJournal()),
    holders: () => deps.stores.lockHolders(),
    close: () => deps.stores.close(),
  };
}

/** A read of the stores or of berth.json, or why it could not be made, in words. */
async function readingStores<T>(read: () => Promise<T>): Promise<T | Unseen> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ConfigError)
      return { refused: error.message, code: 'invalid_config', status: 409 };
    return { refused: storesCannotOpen(error), code: storesCode(error), status: 503 };
  }
}
