import { commands } from '../commands/table.ts';
import type { Authenticator } from './authenticator.ts';
import { type PlainAnswer, unauthorized } from './unauthorized.ts';

/**
 * What a server may answer before it makes a Request at all, from the request line and
 * the Authorization header alone, or undefined: hand the request on to the app.
 */
export type FrontDoor = (
  method: string,
  target: string,
  authorization: string | undefined,
) => PlainAnswer | undefined;

const ROUTE_PATHS = new Set<string>(commands.map((command) => command.route));

/**
 * The app's own first decision, made without a Request: a POST to one of the five routes,
 * its target exactly the route's path, that the authenticator refuses at once (no token;
 * the seed's 401 while no identity provider answers) is the 401 the route would answer.
 * Anything else (a query, a `%`, an absolute-form target, another method, a decision to
 * wait for) is handed on, so that every other answer is the app's, in its words.
 */
export function frontDoor(authenticator: Authenticator): FrontDoor {
  return (method, target, authorization) => {
    if (method !== 'POST' || !ROUTE_PATHS.has(target)) return undefined;
    const decision = authenticator.authenticate({ authorization, url: target });
    if (typeof decision === 'function' || decision.ok) return undefined;
    return unauthorized(decision);
  };
}
