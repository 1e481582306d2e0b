import type { Code } from '../codes.ts';
import { type Config, ConfigError, type LoadConfig } from '../config/config.ts';
import { declaredFor, withDeclared } from '../declared.ts';
import { grantRefusal } from '../grants.ts';
import { MachineError, type ReachMachine } from '../machines/machine.ts';
import { surveyAgain } from '../machines/survey-again.ts';
import { isName } from '../names.ts';
import type { CommandRequest, Outcome } from '../request.ts';
import { type CommandAnswer, FORMAT_VERSION } from '../result.ts';
import { saidOf } from '../said.ts';
import type { Settings } from '../settings.ts';
import { checkNodeIn } from '../settings.ts';
import {
  type JournalEntry,
  StoreError,
  type Stores,
  storesCannotOpen,
  storesCode,
} from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';
import type { CommandContext } from './context.ts';
import type { FleetEvent } from './fleet-watch.ts';
import type { CommandShape as Command } from './table.ts';

/** What both faces give the act runner: where things are, and who is asking. */
export interface ActDeps {
  loadConfig: LoadConfig;
  stores: Stores;
  machines: (settings: Settings) => ReachMachine;
}

export type Face = Pick<
  CommandContext,
  | 'actor'
  | 'via'
  | 'mint'
  | 'fullDiff'
  | 'progress'
  | 'output'
  | 'signal'
  | 'lockWaitMs'
  | 'refresh'
> & {
  now?: () => Date;
  /** Told how each node of a target is getting on: the command line shows it. */
  watch?: (event: FleetEvent) => void;
};

/**
 * An act made ready: its required fields checked and its node's stores opened. `run`
 * carries it out, journals it and closes the stores. A face answers `missing` with a
 * 400 or exit 2, `stores` with a 503 or exit 3, and a run's outcome with 200/409, 0/1.
 */
export type OpenedAct =
  | { kind: 'missing'; refused: string; code: 'fields_missing' }
  | { kind: 'stores'; refused: string; code: Code }
  | { kind: 'ready'; run(): Promise<RunOutcome> };

/** A run's outcome; `storeFailed` when the stores failed mid-act (then 503, exit 3). */
export type RunOutcome = Outcome & { storeFailed?: true };

/** The refusal for a request without the fields its command needs, or undefined. */
export function missingFields(command: Command, request: CommandRequest): string | undefined {
  const needsModule = command.needs.includes('module');
  if (request.node === '' || (needsModule && request.module === '')) {
    return needsModule ? 'both node and module are needed' : 'node is needed';
  }
  return undefined;
}

/**
 * The act runner, one for both faces, in docs/api.md's order after authentication and
 * decoding: required fields → open the stores → the context → run → journal → close.
 * A node name that breaks the rule or is not in the inventory is the command's refusal,
 * journaled apart from every node.
 */
export async function openAct(
  command: Command,
  request: CommandRequest,
  deps: ActDeps,
  face: Face,
): Promise<OpenedAct> {
  const missing = missingFields(command, request);
  if (missing) return { kind: 'missing', refused: missing, code: 'fields_missing' };

  try {
    await deps.stores.open();
  } catch (error) {
    // The stores are chosen by berth.json: one that cannot be used is the operator's to mend.
    if (error instanceof ConfigError)
      return {
        kind: 'ready',
        run: async () => ({ said: '', error: error.message, code: 'invalid_config' }),
      };
    return { kind: 'stores', refused: storesCannotOpen(error), code: storesCode(error) };
  }
  // A target that is not one node's name (a group, a list) needs the whole inventory.
  const oneNode = isName(request.node);
  let config: Config;
  try {
    config = await deps.loadConfig(oneNode ? [request.node] : undefined);
  } catch (error) {
    if (error instanceof ConfigError)
      return {
        kind: 'ready',
        run: async () => ({ said: '', error: error.message, code: 'invalid_config' }),
      };
    return { kind: 'stores', refused: storesCannotOpen(error), code: storesCode(error) };
  }
  if (!oneNode) {
    const { openFleetAct } = await import('./fleet.ts');
    return openFleetAct(command, request, config, deps, face);
  }
  const opened = await openNodeAct(command, request, config, deps, face);
  if (opened.kind !== 'open') return opened;
  return {
    kind: 'ready',
    async run() {
      try {
        return await opened.act.run(request);
      } finally {
        await opened.act.close();
      }
    },
  };
}

/**
 * One node's act, its lock held from opening to `close`: `run` carries the command out on
 * that node and journals it, and may be called more than once under the same lock (a
 * target's act plans every node again under its lock before acting on any).
 */
export interface NodeAct {
  context: CommandContext;
  run(request: CommandRequest): Promise<RunOutcome>;
  /**
   * The next `run` may plan on the survey the last one made, if it asks the same and
   * nothing was done since (a target's act that begins a node at once after its check).
   */
  planOnLastSurvey(): void;
  close(): Promise<void>;
}

/**
 * An act refused before any node's lock: journaled apart from every node (the preview too,
 * when `previewToo`, so that the journal shows who tried).
 */
export function refusedUnplaced(
  command: Command,
  request: CommandRequest,
  deps: ActDeps,
  face: Face,
  refusal: { error: string; code: Code },
  previewToo = false,
): Extract<OpenedAct, { kind: 'ready' }> {
  const now = face.now ?? (() => new Date());
  return {
    kind: 'ready',
    run: () =>
      journaled(
        command,
        request,
        face,
        now,
        { said: '', ...refusal },
        (entry) => deps.stores.journalUnplaced(entry),
        { previewToo },
      ),
  };
}

/**
 * Opens one node of the inventory for a command: the grants over the API, the node name,
 * then its machine and its locked records. A refusal before the lock is a `ready` act
 * that only says it (journaled apart from every node).
 */
export async function openNodeAct(
  command: Command,
  request: CommandRequest,
  config: Config,
  deps: ActDeps,
  face: Face,
): Promise<{ kind: 'open'; act: NodeAct } | Exclude<OpenedAct, { kind: 'missing' }>> {
  const now = face.now ?? (() => new Date());
  // Over the API, a subject no grant covers is refused before the inventory is looked at
  // (it learns no node it may not act on) and before the node's lock is waited for; its
  // preview as its act, and journaled either way, so that the journal shows who tried.
  const denied =
    face.via === 'api' && isName(request.node)
      ? grantRefusal(config.settings, face.actor, command.name, request.node)
      : undefined;
  if (denied)
    return refusedUnplaced(
      command,
      request,
      deps,
      face,
      { error: denied, code: 'not_granted' },
      true,
    );
  let nodeRefusal = checkNodeIn(config.settings, request.node);
  try {
    if (nodeRefusal && command.recordsAlone && (await hasRecords(deps.stores, request.node)))
      nodeRefusal = undefined;
  } catch (error) {
    return { kind: 'stores', refused: storesCannotOpen(error), code: storesCode(error) };
  }
  if (nodeRefusal) {
    const code = isName(request.node) ? 'unknown_node' : 'invalid_name';
    return refusedUnplaced(command, request, deps, face, { error: nodeRefusal, code });
  }

  // Made before the lock is taken: nothing between the lock and `run` may throw.
  const surveys = surveyAgain(deps.machines(config.settings)(request.node));
  let store: Awaited<ReturnType<Stores['openNode']>>;
  try {
    store = await deps.stores.openNode(request.node, command.name);
  } catch (error) {
    return { kind: 'stores', refused: storesCannotOpen(error), code: storesCode(error) };
  }
  const context: CommandContext = {
    // It is to run what berth.json declares too; that is never kept as an assignment.
    store: withDeclared(store, declaredFor(config.settings, request.node)),
    settings: config.settings,
    catalog: config.catalog,
    machine: surveys.machine,
    actor: face.actor,
    via: face.via,
    now,
    mint: face.mint,
    fullDiff: face.fullDiff,
    lockWaitMs: face.lockWaitMs,
    refresh: face.refresh,
    progress: face.progress,
    output: face.output,
    signal: face.signal,
  };
  return {
    kind: 'open',
    act: {
      context,
      async run(asked) {
        let outcome: Outcome;
        try {
          outcome = await command.run(asked, context);
        } catch (error) {
          if (error instanceof StoreError)
            return {
              said: '',
              error: storesCannotOpen(error),
              code: storesCode(error),
              storeFailed: true,
            };
          // A value berth cannot seal or open: refused in its own words (exit 1, 409).
          outcome =
            error instanceof VaultError
              ? { said: '', error: error.message, code: 'vault_unopened' }
              : failed(command, asked, error);
        }
        // It reached its node: the node is in the typed result, with or without steps.
        outcome.report ??= { steps: [], blockers: [] };
        return await journaled(command, asked, face, now, outcome, (entry) => store.journal(entry));
      },
      planOnLastSurvey: surveys.again,
      close: () => store.close().catch(() => {}),
    },
  };
}

/** Whether the stores keep records of `node`, in berth.json or not (a name only). */
async function hasRecords(stores: Stores, node: string): Promise<boolean> {
  return isName(node) && (await stores.listNodes()).includes(node);
}

/**
 * Journals the act with its outcome. Previews are not, unless `previewToo`: one the
 * grants refuse is, so that the journal shows who tried what. A journal that
 * cannot record it does not undo the act (undoing could lose more): the caller hears
 * that the record is missing, in words that do not read as "nothing was done".
 */
export async function journaled(
  command: Command,
  request: CommandRequest,
  face: Face,
  now: () => Date,
  outcome: Outcome,
  append: (entry: JournalEntry) => Promise<void>,
  { previewToo = false } = {},
): Promise<RunOutcome> {
  const act = isAct(command, request);
  if (!act && !previewToo) return outcome;
  // Failed is begun and stopped at a step; refused is nothing begun.
  const ended =
    outcome.error === undefined ? 'done' : outcome.report?.failed ? 'failed' : 'refused';
  try {
    await append({
      at: now().toISOString(),
      actor: face.actor,
      via: face.via,
      act: act ? command.name : `${command.name} preview`,
      node: request.node,
      module: command.needs.includes('module') ? request.module : request.filter || undefined,
      outcome: ended,
      said: saidOf(outcome),
      error: outcome.error,
    });
    return outcome;
  } catch (error) {
    const why = (error as Error).message;
    return {
      ...outcome,
      error:
        outcome.error === undefined
          ? `${command.name} was done, but the journal could not record it: ${why}`
          : `${outcome.error} (and the journal could not record this ${ended === 'failed' ? 'failure' : 'refusal'}: ${why})`,
      code: outcome.code ?? 'journal_failed',
    };
  }
}

/**
 * A command's typed result, as `--json` prints it and the API answers a command that ran
 * (200 or 409): `said` and `refused` as docs/api.md has them, the preview's digest, and the
 * node's digest, steps, blockers and outcome. A command refused before it reached its node
 * (a node not in the inventory, berth.json not valid) has no node in `nodes`.
 */
export function answerOf(
  command: Command,
  request: CommandRequest,
  outcome: Outcome,
): CommandAnswer {
  const preview = !isAct(command, request);
  const { report, fleet } = outcome;
  if (fleet) {
    return {
      format_version: FORMAT_VERSION,
      said: saidOf(outcome),
      ...refusedOf(outcome),
      ...(fleet.digest === undefined ? {} : { digest: fleet.digest }),
      nodes: fleet.nodes,
    };
  }
  const nodes: CommandAnswer['nodes'] = {};
  if (report) {
    nodes[request.node] = {
      ...(report.digest === undefined ? {} : { digest: report.digest }),
      steps: report.steps,
      blockers: report.blockers,
      ...(outcome.error === undefined ? {} : { code: codeOf(outcome) }),
      outcome:
        outcome.error !== undefined
          ? report.failed
            ? 'failed'
            : 'refused'
          : preview
            ? 'previewed'
            : 'done',
    };
  }
  return {
    format_version: FORMAT_VERSION,
    said: saidOf(outcome),
    ...refusedOf(outcome),
    ...(preview && report?.digest !== undefined ? { digest: report.digest } : {}),
    nodes,
  };
}

/** `refused` and its code beside it, when the command refused or failed. */
function refusedOf(outcome: Outcome): { refused?: string; code?: Code } {
  if (outcome.error === undefined) return {};
  return { refused: outcome.error, code: codeOf(outcome) };
}

/** A refusal's code; one made without its own is a failure berth did not foresee. */
export function codeOf(outcome: Outcome): Code {
  return outcome.code ?? 'failed';
}

/** Previews change nothing and are not journaled; everything else a command does is an act. */
export function isAct(command: Command, request: CommandRequest) {
  return !command.options.includes('yes') || request.yes;
}

/** An unexpected failure inside a command, as a refusal in words, never a stack trace. */
function failed(command: Command, request: CommandRequest, error: unknown): Outcome {
  if (error instanceof MachineError && error.failure === 'unreachable')
    return {
      said: '',
      error: `${request.node} cannot be reached: ${error.message}`,
      code: 'unreachable',
    };
  return { said: '', error: `${command.name} failed: ${(error as Error).message}`, code: 'failed' };
}
