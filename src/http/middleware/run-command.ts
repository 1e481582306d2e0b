import type { Handler } from 'hono';
import { type ApiEnv, answer } from '../answer.ts';

/**
 * Step 5: the command, from the table. Its refusal is a 409 with what it said; a store
 * that failed during the act is a 503, as one that could not be opened.
 */
export const runCommand: Handler<ApiEnv> = async (c) => {
  const outcome = await c.get('act').run();
  if (outcome.storeFailed) return answer(503, { refused: outcome.error });
  if (outcome.error !== undefined)
    return answer(409, { said: outcome.said, refused: outcome.error });
  return answer(200, { said: outcome.said });
};
