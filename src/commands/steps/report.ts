import type { StepReport } from '../../model/result.ts';
import type { Step } from './step.ts';

/** A step as the typed result lists it: its kind, module, and the path (and secret) it touches. */
export function stepReport(step: Step): StepReport {
  const report: StepReport = { kind: step.do, module: step.module };
  if ('path' in step) report.path = step.path;
  if ('secret' in step) report.secret = step.secret;
  if (step.do === 'rotate') report.kid = step.kid;
  // A start planned because its check never answered: the deadline's code beside it.
  if (step.do === 'start' && step.check?.timedOut !== undefined) report.code = 'hook_timeout';
  if (step.do === 'package') {
    report.package = step.package;
    report.version = step.version;
    report.how = step.how;
    if (step.from !== undefined) report.from = step.from;
    if (step.with) report.with = step.with;
  }
  return report;
}
