import type { RunOutcome } from '../commands/outcome.ts';
import { type CommandAnswer, FORMAT_VERSION } from '../model/result.ts';
import { refusalWords } from './refusals.ts';
import { saidOf } from './said.ts';

/**
 * A command's typed result as `--json` prints it and the API answers a command that ran
 * (200 or 409): `said` and `refused` as docs/api.md has them, rendered here from the
 * outcome, the preview's digest, and each node's digest, steps, blockers, outcome and
 * time. A command refused before it reached a node (a target that names none, berth.json
 * not valid) has no node in `nodes`.
 */
export function answerOf(outcome: RunOutcome): CommandAnswer {
  const digest = outcome.target?.digest;
  const { refusal } = outcome;
  return {
    format_version: FORMAT_VERSION,
    said: saidOf(outcome),
    ...(refusal === undefined ? {} : { refused: refusalWords(refusal), code: refusal.code }),
    ...(digest === undefined ? {} : { digest }),
    nodes: outcome.target?.nodes ?? {},
  };
}
