import type { RunOutcome } from '../commands/outcome.ts';
import { type CommandAnswer, FORMAT_VERSION } from '../model/result.ts';
import { nodeReportOf } from './blockers.ts';
import { refusalWords } from './refusals.ts';
import { type SaidOptions, saidOf } from './said.ts';

/**
 * A command's typed result as `--json` prints it and the API answers a command that ran
 * (200 or 409): `said` and `refused` as docs/api.md has them, rendered here from the
 * outcome, the preview's digest, and each node's digest, steps, blockers, outcome and
 * time. A command refused before it reached a node (a target that names none, berth.json
 * not valid) has no node in `nodes`. `said` shows each file's whole diff when `shown` asks
 * (the command line's `--full-diff`), else its settings first and about 40 lines, as the
 * API answers.
 */
export function answerOf(outcome: RunOutcome, shown?: SaidOptions): CommandAnswer {
  const digest = outcome.target?.digest;
  const { refusal } = outcome;
  return {
    format_version: FORMAT_VERSION,
    said: saidOf(outcome, shown),
    ...(refusal === undefined ? {} : { refused: refusalWords(refusal), code: refusal.code }),
    ...(digest === undefined ? {} : { digest }),
    nodes: nodesOf(outcome),
  };
}

/** Each node's part of the answer, by name, its blockers with their words. */
export function nodesOf(outcome: RunOutcome): CommandAnswer['nodes'] {
  const nodes = Object.entries(outcome.target?.nodes ?? {});
  return Object.fromEntries(nodes.map(([node, result]) => [node, nodeReportOf(result, node)]));
}
