import type { Config } from '../config/config.ts';
import { MachineError } from '../machines/machine.ts';
import type { SurveyAgain } from '../machines/survey-again.ts';
import { journaledOf } from '../model/journaled.ts';
import type { LeafRefusal, Refusal, RefusalOf } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import { type NewJournalEntry, StoreError, type Stores, storesRefusal } from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';
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
): Promise<{ kind: 'open'; act: NodeAct } | { kind: 'stores'; refusal: RefusalOf<'stores'> }> {
  const now = face.now ?? (() => new Date());
  let store: Awaited<ReturnType<Stores['openNode']>>;
  try {
    store = await deps.stores.openNode(node, command.name);
  } catch (error) {
    return { kind: 'stores', refusal: storesRefusal(error) };
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
            return { refusal: storesRefusal(error), storeFailed: true };
          // A value berth cannot seal or open: refused in its own words (exit 1, 409).
          outcome = {
            refusal:
              error instanceof VaultError
                ? { kind: 'vault', code: 'vault_unopened', message: error.message }
                : failed(command, asked, error),
          };
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
 * An act refused as a whole, before any node acted (before any node's lock, or at a
 * target's gate): journaled apart from every node, with the target as asked (the preview
 * too, when `previewToo`, so that the journal shows who tried).
 */
export function refusedUnplaced(
  command: Command,
  request: CommandRequest,
  deps: ActDeps,
  face: Face,
  refusal: Refusal,
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
        { refusal },
        (entry) => deps.stores.journalUnplaced(entry),
        { previewToo },
      ),
  };
}

/**
 * Journals the act with its target, its digest and its outcome: its typed result and
 * refusal, whose words are made when the journal is read.
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
  append: (entry: NewJournalEntry) => Promise<void>,
  { previewToo = false } = {},
): Promise<RunOutcome> {
  const act = isAct(command, request);
  if (!act && !previewToo) return outcome;
  // Failed is begun and stopped at a step; refused is nothing begun.
  const { report, refusal, result } = outcome;
  const ended = refusal === undefined ? 'done' : report?.failed ? 'failed' : 'refused';
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
      code: refusal?.code,
      steps: report?.steps ?? [],
      blockers: report?.blockers ?? [],
      // Only an act is journaled, and an act's result is never a preview.
      result: result === undefined || 'preview' in result ? undefined : journaledOf(result),
      refusal,
    });
    return outcome;
  } catch (error) {
    const message = (error as Error).message;
    const unjournaled = { kind: 'unjournaled', command: command.name, ended, message } as const;
    // A refusal's own journal entry is not one of these, nor a target's: a leaf, always.
    return {
      ...outcome,
      refusal:
        refusal === undefined
          ? { ...unjournaled, code: 'journal_failed' }
          : { ...unjournaled, code: refusal.code, refusal: refusal as LeafRefusal },
    };
  }
}

/** Previews change nothing and are not journaled; everything else a command does is an act. */
export function isAct(command: Command, request: CommandRequest) {
  if (command.changesNothing) return false;
  return !command.options.includes('yes') || request.yes;
}

/** An unexpected failure inside a command, as a refusal, never a stack trace. */
function failed(command: Command, request: CommandRequest, error: unknown): Refusal {
  const { message } = error as Error;
  if (error instanceof MachineError && error.failure === 'unreachable')
    return { kind: 'unreachable', code: 'unreachable', node: request.node, message };
  return { kind: 'failed', code: 'failed', command: command.name, message };
}
