import type { CommandResult } from '../commands/results.ts';
import type { KeptSurvey, WordedSurvey } from '../stores/stores.ts';
import { nodeReportOf } from './blockers.ts';
import { refusalWords } from './refusals.ts';
import { saidOf } from './said.ts';

/**
 * A kept survey in words, as the view shows it: its preview with each file's whole diff,
 * its refusal, and its blockers' words, made from the typed survey when it is read. An
 * earlier berth's survey keeps the words it was kept with.
 */
export function surveyShown(survey: KeptSurvey): WordedSurvey {
  if (!('survey_version' in survey)) return survey;
  const { survey_version: _version, result, refusal, report, ...kept } = survey;
  return {
    ...kept,
    report: nodeReportOf(report, survey.node),
    // A kept plan's blockers are read back as any blocker's value; a converge's are its own.
    said:
      result === undefined ? '' : saidOf({ result: result as CommandResult }, { fullDiff: true }),
    ...(refusal === undefined ? {} : { refused: refusalWords(refusal) }),
  };
}
