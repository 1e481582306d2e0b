import type { Config } from '../config/config.ts';
import { MachineError } from '../machines/machine.ts';
import type { SurveyAgain } from '../machines/survey-again.ts';
import type { Code } from '../model/codes.ts';
import type { CommandRequest } from '../model/request.ts';
import {
  type JournalEntry,
  StoreError,
  type Stores,
  storesCannotOpen,
  storesCode,
} from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';
import { saidOf } from '../words/said.ts';
import type { ActDeps, Face, OpenedAct } from './act-shapes.ts';
import type { CommandShape as Command } from './command-shape.ts';
import type { CommandContext } from './context.ts';
import { declaredFor, withDeclared } from './declared.ts';
import type { Outcome, RunOutcome } from './outcome.ts';
import { stateCaAccess } from './state-ca.ts';

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
 * Opens one node of a resolved target for a command, on the machine the runner reached it
 * by: its locked records. The node is in the inventory (or, for a command on the records
 * alone, in the stores).
 */
export async function lockNode(
  command: Command,
  node: string,
  target: string,
  surveys: SurveyAgain,
  config: Config,
  deps: ActDeps,
  face: Face,
): Promise<{ kind: 'open'; act: NodeAct } | { kind: 'stores'; refused: string; code: Code }> {
  const now = face.now ?? (() => new Date());
  let store: Awaited<ReturnType<Stores['openNode']>>;
  try {
    store = await deps.stores.openNode(node, command.name);
  } catch (error) {
    return { kind: 'stores', refused: storesCannotOpen(error), code: storesCode(error) };
  }
  const context: CommandContext = {
    // It is to run what berth.json declares too; that is never kept as an assignment.
    store: withDeclared(store, declaredFor(config.settings, node)),
    settings: config.settings,
    catalog: config.catalog,
    machine: surveys.machine,
    target,
    actor: face.actor,
    via: face.via,
    now,
    line: face.line,
    ca: stateCaAccess(deps.stores, { actor: face.actor, via: face.via }, now),
    tell: face.tell,
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
            return { error: storesCannotOpen(error), code: storesCode(error), storeFailed: true };
          // A value berth cannot seal or open: refused in its own words (exit 1, 409).
          outcome =
            error instanceof VaultError
              ? { error: error.message, code: 'vault_unopened' }
              : failed(command, asked, error);
        }
        // It reached its node: the node is in the typed result, with or without steps.
        outcome.report ??= { steps: [], blockers: [] };
        return await journaled(command, asked, target, face, now, outcome, (entry) =>
          store.journal(entry),
        );
      },
      planOnLastSurvey: surveys.again,
      close: () => store.close().catch(() => {}),
    },
  };
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
        request.node,
        face,
        now,
        { ...refusal },
        (entry) => deps.stores.journalUnplaced(entry),
        { previewToo },
      ),
  };
}

/**
 * Journals the act with its target, its digest and its outcome, typed and in words.
 * Previews are not, unless `previewToo`: one the grants refuse is, so that the journal
 * shows who tried what. A journal that
 * cannot record it does not undo the act (undoing could lose more): the caller hears
 * that the record is missing, in words that do not read as "nothing was done".
 */
async function journaled(
  command: Command,
  request: CommandRequest,
  target: string,
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
  const { report } = outcome;
  try {
    await append({
      at: now().toISOString(),
      actor: face.actor,
      via: face.via,
      act: act ? command.name : `${command.name} preview`,
      node: request.node,
      target,
      module: command.needs.includes('module') ? request.module : request.filter || undefined,
      digest: report?.digest,
      outcome: ended,
      // A refusal made without a code of its own is a failure berth did not foresee.
      code: outcome.error === undefined ? undefined : (outcome.code ?? 'failed'),
      steps: report?.steps ?? [],
      blockers: report?.blockers ?? [],
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

/** Previews change nothing and are not journaled; everything else a command does is an act. */
export function isAct(command: Command, request: CommandRequest) {
  if (command.changesNothing) return false;
  return !command.options.includes('yes') || request.yes;
}

/** An unexpected failure inside a command, as a refusal in words, never a stack trace. */
function failed(command: Command, request: CommandRequest, error: unknown): Outcome {
  if (error instanceof MachineError && error.failure === 'unreachable')
    return { error: `${request.node} cannot be reached: ${error.message}`, code: 'unreachable' };
  return { error: `${command.name} failed: ${(error as Error).message}`, code: 'failed' };
}
