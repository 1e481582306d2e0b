import { createMiddleware } from 'hono/factory';
import { type ApiEnv, answer } from '../answer.ts';
import type { Authentication, Authenticator } from '../authenticator.ts';

/**
 * Step 1 of the seed's order: who is asking. A refusal is a 401 with its RFC 6750
 * challenge, before anything else of the request is read.
 */
export function authenticate(authenticator: Authenticator) {
  return createMiddleware<ApiEnv>(async (c, next) => {
    const who: Authentication = await authenticator.authenticate(c.req.raw);
    if (!who.ok)
      return answer(401, { refused: who.refused }, { 'WWW-Authenticate': who.challenge });
    c.set('actor', who.subject);
    await next();
  });
}
