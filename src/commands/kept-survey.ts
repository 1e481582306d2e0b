import type { CommandRequest } from '../model/request.ts';
import type { KeptSurvey } from '../stores/stores.ts';
import { nodeReportOf } from '../words/blockers.ts';
import { refusalWords } from '../words/refusals.ts';
import { saidOf } from '../words/said.ts';
import type { Face } from './act-shapes.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { nodeReport } from './node-report.ts';
import type { NodeEnd } from './outcome.ts';

/**
 * A node's part of a converge preview as the stores keep it for whoever reads the fleet
 * later: its typed part (digest, steps, blockers, outcome), and its words with each
 * file's whole diff, whatever the face asked to be shown; or its refusal's words.
 */
export function keptSurvey(
  command: Command,
  request: CommandRequest,
  end: NodeEnd,
  face: Pick<Face, 'actor' | 'via'>,
  at: Date,
): KeptSurvey {
  const { result, refusal } = end.outcome;
  const preview =
    result?.command === 'converge' && 'preview' in result ? result.preview : undefined;
  return {
    node: end.node,
    at: at.toISOString(),
    actor: face.actor,
    via: face.via,
    report: nodeReportOf(nodeReport(command, request, end), end.node),
    said: saidOf({ result }, { fullDiff: true }),
    ...(refusal === undefined ? {} : { refused: refusalWords(refusal) }),
    ...(preview?.facts ? { facts: { ...preview.facts } } : {}),
  };
}
