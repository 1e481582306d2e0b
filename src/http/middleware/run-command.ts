import type { Handler } from 'hono';
import { answerOf, codeOf } from '../../commands/act.ts';
import type { Command } from '../../commands/table.ts';
import { type ApiEnv, answer } from '../answer.ts';

/**
 * Step 5: the command, from the table, answered with its typed result. Its refusal is a
 * 409 with what it said; a store that failed during the act is a 503, as one that could
 * not be opened.
 */
export function runCommand(command: Command): Handler<ApiEnv> {
  return async (c) => {
    const outcome = await c.get('act').run();
    if (outcome.storeFailed) return answer(503, { refused: outcome.error, code: codeOf(outcome) });
    const body = answerOf(command, c.get('request'), outcome);
    return answer(outcome.error === undefined ? 200 : 409, body);
  };
}
