import type { Context } from 'hono';
import { noteAccess } from '../access-facts.ts';
import { type ApiEnv, answer } from '../answer.ts';
import type { Authentication, Authenticator } from '../authenticator.ts';
import type { Step } from '../chain.ts';

/**
 * Step 1 of the seed's order: who is asking. A refusal is a 401 with its RFC 6750
 * challenge, before anything else of the request is read; one the authenticator decides
 * at once (no token at all) is answered at once.
 */
export function authenticate(authenticator: Authenticator): Step<ApiEnv> {
  // A refusal the authenticator keeps (no token at all) is put into words once.
  const bodies = new WeakMap<Authentication, string>();
  const bodyOf = (who: Extract<Authentication, { ok: false }>) => {
    let body = bodies.get(who);
    if (body === undefined) {
      body = JSON.stringify({ refused: who.refused });
      bodies.set(who, body);
    }
    return body;
  };
  const decide = (
    c: Context<ApiEnv>,
    next: () => Promise<void>,
    who: Authentication,
  ): Response | Promise<void> => {
    if (!who.ok) return answer(401, bodyOf(who), { 'WWW-Authenticate': who.challenge });
    c.set('actor', who.subject);
    noteAccess(c.env, { subject: who.subject });
    return next();
  };
  return (c, next) => {
    const who = authenticator.authenticate(c.req.raw);
    if (!(who instanceof Promise)) return decide(c, next, who);
    // biome-ignore lint/suspicious/noConfusingVoidType: a Step resolves as Hono's middleware does
    return who.then<Response | void>((known) => decide(c, next, known));
  };
}
