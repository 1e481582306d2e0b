import type { Context } from 'hono';
import { noteAccess } from '../access-facts.ts';
import type { ApiEnv } from '../answer.ts';
import { type Authentication, type Authenticator, presentedBy } from '../authenticator.ts';
import type { Step } from '../chain.ts';
import { unauthorized } from '../unauthorized.ts';

/**
 * Step 1 of the processing order (docs/api.md): who is asking. A refusal is a 401 with its RFC 6750
 * challenge, before anything else of the request is read; one the authenticator decides
 * at once (no token at all) is answered at once.
 */
export function authenticate(authenticator: Authenticator): Step<ApiEnv> {
  const decide = (
    c: Context<ApiEnv>,
    next: () => Promise<void>,
    who: Authentication,
  ): Response | Promise<void> => {
    if (!who.ok) {
      const { status, headers, body } = unauthorized(who);
      return new Response(body, { status, headers });
    }
    c.set('actor', who.subject);
    noteAccess(c.env, { subject: who.subject });
    return next();
  };
  return (c, next) => {
    const decision = authenticator.authenticate(presentedBy(c.req.raw));
    if (typeof decision !== 'function') return decide(c, next, decision);
    // biome-ignore lint/suspicious/noConfusingVoidType: a Step resolves as Hono's middleware does
    return decision().then<Response | void>((known) => decide(c, next, known));
  };
}
