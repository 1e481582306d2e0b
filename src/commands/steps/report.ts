import type { StepReport } from '../../result.ts';
import type { Step } from './step.ts';

/** A step as the typed result lists it: its kind, module, and the path (and secret) it touches. */
export function stepReport(step: Step): StepReport {
  const report: StepReport = { kind: step.do, module: step.module };
  if ('path' in step) report.path = step.path;
  if ('secret' in step) report.secret = step.secret;
  return report;
}
