import type { ProgressEvent } from '../commands/progress-events.ts';
import { doneWords } from './steps.ts';

/**
 * A node's event as the command line prints it when it comes, one line: a step done in
 * its command's voice, a hook begun, a hook's own line indented under it. Undefined for
 * what is not printed line by line (where a node stands, how it ended).
 */
export function progressLine(event: ProgressEvent): string | undefined {
  switch (event.kind) {
    case 'step':
      return doneWords(event.told.step, event.node, event.told.voice);
    case 'hook-started':
      return `running ${event.hook} of ${event.module} …`;
    case 'hook-line':
      return `  ${event.line}`;
    default:
      return undefined;
  }
}
