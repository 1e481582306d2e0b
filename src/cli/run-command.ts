import { userInfo } from 'node:os';
import { isatty } from 'node:tty';
import { answerOf, missingFields, openAct } from '../commands/act.ts';
import { doneWords } from '../commands/steps/words.ts';
import type { CommandShape as Command } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import type { CommandRequest, Outcome } from '../request.ts';
import { saidOf, untoldOf } from '../said.ts';
import { stateDeps } from './deps.ts';
import { fleetProgress } from './fleet-progress.ts';
import { EXIT, type Io } from './io.ts';
import { sayingWhenWaiting } from './lock-wait.ts';

/**
 * Runs one of the five commands for the command line, through the same act runner as
 * the Command API: the same required-field words, the same store failure words.
 */
export async function runFromCli(
  command: Command,
  request: CommandRequest,
  options: {
    location: StateLocation;
    mint: string[];
    fullDiff: boolean;
    refresh?: boolean;
    json: boolean;
    detailedExitcode: boolean;
    lockWaitMs: number;
  },
  io: Io,
): Promise<number> {
  // Refused before the command ran: as over the API (400, 503), there is no `said`.
  const refuseBefore = (refused: string) => {
    if (options.json) io.out(JSON.stringify({ refused }));
    else io.err(refused);
  };

  // Ctrl-C during an act stops its hook and lets it record what it did; a second one
  // ends berth at once (the stores stay whole: every write is atomic).
  const interrupted = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(`berth was interrupted by ${signal}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A target of several nodes is shown node by node; one node as before.
  const progress = options.json ? undefined : fleetProgress(io, { terminal: isatty(2) });
  try {
    // As over the API, a request without its fields is refused before the stores open.
    const missing = missingFields(command, request);
    if (missing) {
      refuseBefore(missing);
      return EXIT.usage;
    }
    const deps = stateDeps(options.location, io.env, { lockWaitMs: options.lockWaitMs });
    const stores = sayingWhenWaiting(deps.stores, (line) => io.err(line));
    const opened = await openAct(
      command,
      request,
      { ...deps, stores },
      {
        actor: osUser(io),
        via: 'cli',
        mint: options.mint,
        fullDiff: options.fullDiff,
        lockWaitMs: options.lockWaitMs,
        refresh: options.refresh,
        signal: interrupted.signal,
        // A step is printed as it is done; a hook's own lines were streamed as it wrote them.
        progress: options.json
          ? undefined
          : (told) => io.out(doneWords(told.step, request.node, told.voice)),
        output: options.json ? undefined : (line) => io.out(line),
        watch: progress?.watch,
      },
    );
    if (opened.kind === 'missing') {
      refuseBefore(opened.refused);
      return EXIT.usage;
    }
    if (opened.kind === 'stores') {
      refuseBefore(opened.refused);
      return EXIT.stores;
    }
    const outcome = await opened.run();
    progress?.end();
    if (outcome.storeFailed) {
      refuseBefore(outcome.error ?? '');
      return EXIT.stores;
    }
    if (options.json) io.out(JSON.stringify(answerOf(command, request, outcome)));
    else {
      // What was told step by step is printed already; the rest of said is printed now.
      // A target shown on a terminal had its steps drawn on standard error: said is whole.
      const rest =
        outcome.fleet && !progress?.toldOnOutput
          ? saidOf(outcome)
          : (untoldOf(outcome) ?? saidOf(outcome));
      if (rest) io.out(rest);
      if (outcome.error !== undefined) io.err(outcome.error);
    }
    if (outcome.error !== undefined) return EXIT.refused;
    if (options.detailedExitcode && !request.yes) return previewExit(outcome);
    return EXIT.done;
  } finally {
    progress?.end();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * `--detailed-exitcode` on a preview: 0 nothing to do, 2 something to do and nothing
 * blocks it, 1 a blocker stands (a refusal is 1 already, and the stores 3).
 */
function previewExit(outcome: Outcome): number {
  const report = outcome.report;
  if (report && report.blockers.length > 0) return EXIT.refused;
  if (report && report.steps.length > 0) return EXIT.somethingToDo;
  return EXIT.done;
}

/** Who acts on the command line: the OS user. */
export function osUser(io: Io): string {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}
