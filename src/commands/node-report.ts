import type { Code } from '../model/codes.ts';
import type { CommandRequest } from '../model/request.ts';
import type { NodeResult } from '../model/result.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { isAct } from './node-act.ts';
import type { NodeEnd } from './outcome.ts';

/** One node's part of the typed result: the same for a node alone and in a target of many. */
export function nodeReport(command: Command, request: CommandRequest, end: NodeEnd): NodeResult {
  const { outcome, how } = end;
  const report = outcome.report ?? { steps: [], blockers: [] };
  const code: Code | undefined = how === 'not-begun' ? 'not_begun' : outcome.refusal?.code;
  const part: NodeResult = {
    ...(report.digest === undefined ? {} : { digest: report.digest }),
    steps: report.steps,
    blockers: report.blockers,
    ...(code === undefined ? {} : { code }),
    outcome:
      how === 'not-begun'
        ? 'not-begun'
        : outcome.refusal !== undefined
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
