import type { Handler } from 'hono';
import { statusOf } from '../../model/codes.ts';
import { answerOf, nodesOf } from '../../words/answer.ts';
import { type ApiEnv, answer } from '../answer.ts';
import { refusedAs } from '../refusal.ts';

/**
 * Step 5: the command, opened by step 4, answered with its typed result. Its refusal is a
 * 409 with what it said; a store that failed during the act is a 503, as one that could
 * not be opened.
 */
export function runCommand(): Handler<ApiEnv> {
  return async (c) => {
    const outcome = await c.get('act').run();
    if (outcome.storeFailed) {
      // A node whose lock or records could not be had is named, with its code; nothing said.
      const nodes = outcome.target && nodesOf(outcome);
      if (outcome.refusal) throw refusedAs(outcome.refusal, { more: nodes && { nodes } });
    }
    const body = answerOf(outcome);
    return answer(outcome.refusal === undefined ? 200 : statusOf(outcome.refusal.code), body);
  };
}
