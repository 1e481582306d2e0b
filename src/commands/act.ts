import { ConfigError, type LoadConfig } from '../config/config.ts';
import { grantRefusal } from '../grants.ts';
import { MachineError, type ReachMachine } from '../machines/machine.ts';
import { isName } from '../names.ts';
import type { CommandRequest, Outcome } from '../request.ts';
import type { Settings } from '../settings.ts';
import { checkNodeIn } from '../settings.ts';
import { type JournalEntry, StoreError, type Stores, storesCannotOpen } from '../stores/stores.ts';
import { VaultError } from '../vault/seal.ts';
import type { CommandContext } from './context.ts';
import type { CommandShape as Command } from './table.ts';

/** What both faces give the act runner: where things are, and who is asking. */
export interface ActDeps {
  loadConfig: LoadConfig;
  stores: Stores;
  machines: (settings: Settings) => ReachMachine;
}

export type Face = Pick<
  CommandContext,
  'actor' | 'via' | 'mint' | 'fullDiff' | 'progress' | 'output' | 'signal'
> & {
  now?: () => Date;
};

/**
 * An act made ready: its required fields checked and its node's stores opened. `run`
 * carries it out, journals it and closes the stores. A face answers `missing` with a
 * 400 or exit 2, `stores` with a 503 or exit 3, and a run's outcome with 200/409, 0/1.
 */
export type OpenedAct =
  | { kind: 'missing'; refused: string }
  | { kind: 'stores'; refused: string }
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
 * The act runner, one for both faces, in the seed's order after authentication and
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
  if (missing) return { kind: 'missing', refused: missing };
  const now = face.now ?? (() => new Date());
  /**
   * Journals the act with its outcome. Previews are not, unless `previewToo`: one the
   * grants refuse is, so that the journal shows who tried what. A journal that
   * cannot record it does not undo the act (undoing could lose more): the caller hears
   * that the record is missing, in words that do not read as "nothing was done".
   */
  const journaled = async (
    outcome: Outcome,
    append: (entry: JournalEntry) => Promise<void>,
    { previewToo = false } = {},
  ): Promise<RunOutcome> => {
    const act = isAct(command, request);
    if (!act && !previewToo) return outcome;
    try {
      await append({
        at: now().toISOString(),
        actor: face.actor,
        via: face.via,
        act: act ? command.name : `${command.name} preview`,
        node: request.node,
        module: command.needs.includes('module') ? request.module : request.filter || undefined,
        outcome: outcome.error === undefined ? 'done' : 'refused',
        said: outcome.said,
        error: outcome.error,
      });
      return outcome;
    } catch (error) {
      const why = (error as Error).message;
      return {
        said: outcome.said,
        error:
          outcome.error === undefined
            ? `${command.name} was done, but the journal could not record it: ${why}`
            : `${outcome.error} (and the journal could not record this refusal: ${why})`,
      };
    }
  };

  try {
    await deps.stores.open();
  } catch (error) {
    // The stores are chosen by berth.json: one that cannot be used is the operator's to mend.
    if (error instanceof ConfigError)
      return { kind: 'ready', run: async () => ({ said: '', error: error.message }) };
    return { kind: 'stores', refused: storesCannotOpen(error) };
  }
  let config: Awaited<ReturnType<LoadConfig>>;
  try {
    config = await deps.loadConfig([request.node]);
  } catch (error) {
    if (error instanceof ConfigError)
      return { kind: 'ready', run: async () => ({ said: '', error: error.message }) };
    return { kind: 'stores', refused: storesCannotOpen(error) };
  }
  // Over the API, a subject no grant covers is refused before the inventory is looked at
  // (it learns no node it may not act on) and before the node's lock is waited for; its
  // preview as its act, and journaled either way, so that the journal shows who tried.
  const denied =
    face.via === 'api' && isName(request.node)
      ? grantRefusal(config.settings, face.actor, command.name, request.node)
      : undefined;
  if (denied) {
    return {
      kind: 'ready',
      run: () =>
        journaled({ said: '', error: denied }, (entry) => deps.stores.journalUnplaced(entry), {
          previewToo: true,
        }),
    };
  }
  const nodeRefusal = checkNodeIn(config.settings, request.node);
  if (nodeRefusal) {
    return {
      kind: 'ready',
      run: () =>
        journaled({ said: '', error: nodeRefusal }, (entry) => deps.stores.journalUnplaced(entry)),
    };
  }

  // Made before the lock is taken: nothing between the lock and `run` may throw.
  const machine = deps.machines(config.settings)(request.node);
  let store: Awaited<ReturnType<Stores['openNode']>>;
  try {
    store = await deps.stores.openNode(request.node, command.name);
  } catch (error) {
    return { kind: 'stores', refused: storesCannotOpen(error) };
  }
  const context: CommandContext = {
    store,
    settings: config.settings,
    catalog: config.catalog,
    machine,
    actor: face.actor,
    via: face.via,
    now,
    mint: face.mint,
    fullDiff: face.fullDiff,
    progress: face.progress,
    output: face.output,
    signal: face.signal,
  };
  return {
    kind: 'ready',
    async run() {
      try {
        let outcome: Outcome;
        try {
          outcome = await command.run(request, context);
        } catch (error) {
          if (error instanceof StoreError)
            return { said: '', error: storesCannotOpen(error), storeFailed: true };
          // A value berth cannot seal or open: refused in its own words (exit 1, 409).
          outcome = {
            said: '',
            error:
              error instanceof VaultError ? error.message : failedWords(command, request, error),
          };
        }
        return await journaled(outcome, (entry) => store.journal(entry));
      } finally {
        await store.close().catch(() => {});
      }
    },
  };
}

/** Previews change nothing and are not journaled; everything else a command does is an act. */
function isAct(command: Command, request: CommandRequest) {
  return !command.options.includes('yes') || request.yes;
}

/** An unexpected failure inside a command, as a refusal in words, never a stack trace. */
function failedWords(command: Command, request: CommandRequest, error: unknown): string {
  if (error instanceof MachineError && error.failure === 'unreachable')
    return `${request.node} cannot be reached: ${error.message}`;
  return `${command.name} failed: ${(error as Error).message}`;
}
