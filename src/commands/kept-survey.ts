import type { CommandRequest } from '../model/request.ts';
import { KEPT_SURVEY_VERSION, type KeptSurvey } from '../stores/stores.ts';
import type { Face } from './act-shapes.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { nodeReport } from './node-report.ts';
import type { NodeEnd } from './outcome.ts';

/**
 * A node's part of a converge preview as the stores keep it for whoever reads the fleet
 * later: its typed part (digest, steps, blockers, outcome), and the preview's typed result
 * or its refusal. Its words are made when it is read (src/words/kept-survey.ts).
 */
export function keptSurvey(
  command: Command,
  request: CommandRequest,
  end: NodeEnd,
  face: Pick<Face, 'actor' | 'via'>,
  at: Date,
): KeptSurvey {
  const { result, refusal } = end.outcome;
  const preview = result?.command === 'converge' && 'preview' in result ? result : undefined;
  const facts = preview?.preview.facts;
  return {
    survey_version: KEPT_SURVEY_VERSION,
    node: end.node,
    at: at.toISOString(),
    actor: face.actor,
    via: face.via,
    report: nodeReport(command, request, end),
    ...(preview ? { result: preview } : {}),
    ...(refusal === undefined ? {} : { refusal }),
    ...(facts ? { facts: { ...facts } } : {}),
  };
}
