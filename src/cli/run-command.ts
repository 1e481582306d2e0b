import { setMaxListeners } from 'node:events';
import { isatty } from 'node:tty';
import { missingFields, openAct } from '../commands/act.ts';
import type { CommandShape as Command } from '../commands/command-shape.ts';
import type { LineOptions } from '../commands/options.ts';
import type { Outcome, RunOutcome } from '../commands/outcome.ts';
import type { PlanAsked } from '../commands/plan-records.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { exitOf } from '../model/codes.ts';
import type { Refusal } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import { type CommandAnswer, enveloped } from '../model/result.ts';
import { answerOf, nodesOf } from '../words/answer.ts';
import { refusalWords } from '../words/refusals.ts';
import { type SaidOptions, saidOf, untoldOf } from '../words/said.ts';
import { osUser, stateDeps } from './deps.ts';
import { EXIT, type Io } from './io.ts';
import { sayingWhenWaiting } from './lock-wait.ts';
import type { PlanFile } from './plan-file.ts';
import { shownProgress } from './progress.ts';

/** How the command line shows a command's result: each file's whole diff with `--full-diff`. */
function saidAs({ fullDiff }: LineOptions): SaidOptions {
  return { fullDiff };
}

/** How the command line runs a command, beside its request. */
export interface CliOptions {
  location: StateLocation;
  /** The command line's options, as one typed value (`--out`, `--json`, `--mint`, …). */
  options: LineOptions;
  /**
   * `berth act FILE`: the plan file acted on, checked against the stores (act-plan.ts),
   * and what it says it will do, printed once it was checked.
   */
  plan?: { asked: PlanAsked; words: string };
}

/**
 * Runs one of the five commands for the command line, through the same act runner as
 * the Command API: the same required-field words, the same store failure words. `--yes`
 * without a digest at a terminal shows the preview and asks before acting on it.
 */
export async function runFromCli(
  command: Command,
  request: CommandRequest,
  cli: CliOptions,
  io: Io,
): Promise<number> {
  const { options } = cli;
  // Ctrl-C during an act stops its hook and lets it record what it did; a second one
  // ends berth at once (the stores stay whole: every write is atomic).
  const interrupted = new AbortController();
  // Every node of a target acting at once listens for this one stop.
  setMaxListeners(0, interrupted.signal);
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted.signal.aborted) process.exit(130);
    interrupted.abort(`berth was interrupted by ${signal}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const run = (asked: CommandRequest) => runOnce(command, asked, cli, interrupted.signal, io);
    // --refresh with --yes is refused before anything runs: it does not preview and ask.
    const approval =
      command.options.includes('yes') &&
      request.yes &&
      request.digest === undefined &&
      !options.refresh
        ? await import('./approval.ts')
        : undefined;
    if (!approval?.canAsk(options.json ?? false)) return printed(await run(request));

    // At a terminal: the preview, then the question; `yes` acts on exactly that preview.
    const preview = { ...request, yes: false };
    const shown = await run(preview);
    if ('exit' in shown) return shown.exit;
    const next = approval.whatToAsk(answerOf(shown.outcome, saidAs(options)));
    if (next.to === 'act') return printed(await run({ ...request, digest: shown.digest }));
    printed(shown);
    if (next.to === 'refuse') {
      io.err(next.refused);
      return EXIT.refused;
    }
    const typed = await approval.askAtTerminal(next.question, interrupted.signal);
    if (typed?.trim() !== 'yes') {
      // At Ctrl-C or Ctrl-D the line typed has not ended.
      if (typed === undefined) io.out('');
      io.err('nothing was done: only yes acts on the preview');
      return EXIT.refused;
    }
    return printed(await run({ ...request, digest: shown.digest }));
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }

  /** Prints what a run said (or its refusal before it ran), and answers its exit code. */
  function printed(ran: Ran): number {
    if ('exit' in ran) return ran.exit;
    const { outcome, rest, asked, note } = ran;
    if (options.json) io.out(JSON.stringify(answerOf(outcome, saidAs(options))));
    else if (rest) io.out(rest);
    const { refusal } = outcome;
    if (refusal !== undefined && !options.json) io.err(refusalWords(refusal));
    if (note) io.err(note);
    if (refusal !== undefined) return exitOf(refusal.code);
    if (options.detailedExitcode && !asked.yes) return previewExit(outcome);
    return EXIT.done;
  }
}

/**
 * A command run once: its outcome with the part of `said` not printed yet, or the exit
 * code of a refusal before it ran (then already said); a preview's digest; and, with
 * `--out`, its plan file written and a note saying where.
 */
type Ran =
  | { exit: number }
  | { outcome: RunOutcome; rest: string; asked: CommandRequest; digest?: string; note?: string };

async function runOnce(
  command: Command,
  request: CommandRequest,
  cli: CliOptions,
  signal: AbortSignal,
  io: Io,
): Promise<Ran> {
  const { options } = cli;
  // How much of each diff the words show is the command line's to say, not the command's.
  const { fullDiff: _shown, ...line } = options;
  const showing = saidAs(options);
  // Refused before the command ran: as over the API (400, 503), there is no `said`.
  const refuseBefore = (refusal: Refusal, nodes?: CommandAnswer['nodes']) => {
    const refused = refusalWords(refusal);
    const { code } = refusal;
    if (options.json) io.out(JSON.stringify(enveloped({ refused, code, ...(nodes && { nodes }) })));
    else io.err(refused);
    return { exit: exitOf(code) };
  };
  // Shown as it goes, but for --json: a target of several node by node, one node alone.
  const progress = options.json
    ? undefined
    : shownProgress(io, { terminal: isatty(2), planWords: cli.plan?.words });
  try {
    // As over the API, a request without its fields is refused before the stores open.
    const missing = missingFields(command, request);
    if (missing) return refuseBefore(missing);
    const deps = stateDeps(cli.location, io.env, { lockWaitMs: options.lockTimeout });
    const stores = sayingWhenWaiting(deps.stores, (line) => io.err(line));
    // With --out, the plan's content is made from the preview's answer, under its locks.
    let plan: PlanFile | undefined;
    const planFiles =
      options.out !== undefined && !request.yes ? await import('./plan-file.ts') : undefined;
    const opened = await openAct(
      command,
      request,
      { ...deps, stores },
      {
        ...(planFiles && {
          writingPlan: (preview: RunOutcome) => {
            const answer = answerOf(preview, showing);
            plan = planFiles.planOf(command.name, request, cli, answer, new Date());
            return plan && planFiles.contentOf(plan);
          },
        }),
        ...(cli.plan && { actingOnPlan: cli.plan.asked }),
        actor: osUser(io),
        via: 'cli',
        line,
        signal,
        tell: progress?.tell,
      },
    );
    if (opened.kind !== 'ready') return refuseBefore(opened.refusal);
    const outcome = await opened.run();
    progress?.end();
    // A node whose lock or records could not be had is named, with its code.
    if (outcome.storeFailed && outcome.refusal)
      return refuseBefore(outcome.refusal, outcome.target && nodesOf(outcome));
    // What was told step by step is printed already; the rest of said is printed now.
    // A target of several shown on a terminal had its steps drawn on standard error: said
    // is whole.
    const several = Object.keys(outcome.target?.nodes ?? {}).length > 1;
    const rest =
      several && !progress?.toldOnOutput
        ? saidOf(outcome, showing)
        : (untoldOf(outcome) ?? saidOf(outcome, showing));
    const answer = answerOf(outcome, showing);
    const ran = { outcome, rest, asked: request, digest: answer.digest };
    if (options.out === undefined || !planFiles) return ran;
    if (!plan) return { ...ran, note: `no plan was written to ${options.out}` };
    const failed = await planFiles.writePlan(options.out, plan);
    if (failed) return { ...ran, outcome: { ...outcome, refusal: outcome.refusal ?? failed } };
    return { ...ran, note: `the plan is in ${options.out}; berth act ${options.out} acts on it` };
  } finally {
    progress?.end();
  }
}

/**
 * `--detailed-exitcode` on a preview, for one node and a target alike: 0 nothing to do,
 * 2 something to do and nothing blocks it, and where a blocker stands on any node the
 * exit of the act's refusal, `blocked` (a refusal had its code's exit already).
 */
function previewExit(outcome: Outcome): number {
  const reports = Object.values(outcome.target?.nodes ?? {});
  if (reports.some((report) => report.blockers.length > 0)) return exitOf('blocked');
  if (reports.some((report) => report.steps.length > 0)) return EXIT.somethingToDo;
  return EXIT.done;
}
