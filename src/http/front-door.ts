import { commands } from '../commands/table.ts';
import type { Authenticator } from './authenticator.ts';
import { noRoute } from './no-route.ts';
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
 * A target that is its own URL's path: characters the URL parser keeps as they are (no
 * `%`, `?`, `#`, `\`, space or quote) and no `.` or `..` segment, which it would remove.
 */
const PLAIN_PATH = /^\/[!$&-;=@-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

/**
 * Methods whose 404 a Request answers with a body, as here: not HEAD (no body), nor
 * CONNECT or TRACE, which no Request can be made with, nor one Node reads but the
 * standard does not name.
 */
const WITH_BODY = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

const NOT_FOUND_HEADERS = { 'Content-Type': 'application/json' };

/**
 * The app's own first decisions, made without a Request:
 * - a POST to one of the five routes, its target exactly the route's path, that the
 *   authenticator refuses at once (no token; the seed's 401 while no identity provider
 *   answers) is the 401 the route would answer;
 * - a plain path that is no route, or a route asked with another method, is its 404.
 * Anything else (a query, a `%`, an absolute-form target, a dot segment, HEAD, a decision
 * to wait for) is handed on, so that every other answer is the app's, in its words.
 */
export function frontDoor(authenticator: Authenticator): FrontDoor {
  return (method, target, authorization) => {
    if (method === 'POST' && ROUTE_PATHS.has(target)) {
      const decision = authenticator.authenticate({ authorization, url: target });
      if (typeof decision === 'function' || decision.ok) return undefined;
      return unauthorized(decision);
    }
    if (!WITH_BODY.has(method) || !PLAIN_PATH.test(target) || DOT_SEGMENT.test(target))
      return undefined;
    return {
      status: 404,
      headers: NOT_FOUND_HEADERS,
      body: JSON.stringify({ refused: noRoute(method, target), code: 'no_route' }),
    };
  };
}
