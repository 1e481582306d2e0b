import type { MiddlewareHandler } from 'hono';
import { noteAccess } from '../access-facts.ts';
import type { ApiEnv } from '../answer.ts';
import { type Authenticator, presentedBy } from '../authenticator.ts';
import { unauthorized } from '../unauthorized.ts';

/**
 * Step 1 of the processing order (docs/api.md), and the one place a request's identity is
 * decided: who is asking. A refusal is a 401 with its RFC 6750 challenge, before anything
 * else of the request is read.
 */
export function authenticate(authenticator: Authenticator): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const decision = authenticator.authenticate(presentedBy(c.req.raw));
    const who = typeof decision === 'function' ? await decision() : decision;
    if (!who.ok) {
      const { status, headers, body } = unauthorized(who);
      return new Response(body, { status, headers });
    }
    c.set('actor', who.subject);
    noteAccess(c.env, { subject: who.subject });
    await next();
  };
}
