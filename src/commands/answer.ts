import type { Code } from '../model/codes.ts';
import type { CommandRequest } from '../model/request.ts';
import { type CommandAnswer, FORMAT_VERSION, type NodeReport } from '../model/result.ts';
import { type SaidOptions, saidOf } from '../words/said.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { isAct } from './node-act.ts';
import type { NodeEnd, Outcome } from './outcome.ts';

/**
 * A command's typed result, as `--json` prints it and the API answers a command that ran
 * (200 or 409): `said` and `refused` as docs/api.md has them, the preview's digest, and
 * each node's digest, steps, blockers, outcome and time. A command refused before it
 * reached a node (a target that names none, berth.json not valid) has no node in `nodes`.
 * `said` shows each file's whole diff when `shown` asks (the command line's `--full-diff`),
 * else its settings first and about 40 lines, as the API answers.
 */
export function answerOf(outcome: Outcome, shown?: SaidOptions): CommandAnswer {
  const digest = outcome.target?.digest;
  return {
    format_version: FORMAT_VERSION,
    said: saidOf(outcome, shown),
    ...(outcome.error === undefined ? {} : { refused: outcome.error, code: codeOf(outcome) }),
    ...(digest === undefined ? {} : { digest }),
    nodes: outcome.target?.nodes ?? {},
  };
}

/** A refusal's code; one made without its own is a failure berth did not foresee. */
export function codeOf(outcome: Outcome): Code {
  return outcome.code ?? 'failed';
}

/** One node's part of the typed result: the same for a node alone and in a target of many. */
export function nodeReport(command: Command, request: CommandRequest, end: NodeEnd): NodeReport {
  const { outcome, how } = end;
  const report = outcome.report ?? { steps: [], blockers: [] };
  const code: Code | undefined =
    how === 'not-begun' ? 'not_begun' : outcome.error === undefined ? undefined : codeOf(outcome);
  const part: NodeReport = {
    ...(report.digest === undefined ? {} : { digest: report.digest }),
    steps: report.steps,
    blockers: report.blockers,
    ...(code === undefined ? {} : { code }),
    outcome:
      how === 'not-begun'
        ? 'not-begun'
        : outcome.error !== undefined
          ? report.failed
            ? 'failed'
            : 'refused'
          : isAct(command, request)
            ? 'done'
            : 'previewed',
    ms: Math.round(end.ms),
  };
  return part;
}
