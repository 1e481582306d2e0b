import { bodyLimit } from 'hono/body-limit';
import { HonoBase } from 'hono/hono-base';
import { HTTPException } from 'hono/http-exception';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import type { ActDeps } from '../commands/act-shapes.ts';
import type { Route } from '../commands/command-shape.ts';
import { statusOf } from '../model/codes.ts';
import { type ApiEnv, answer } from './answer.ts';
import type { Authenticator } from './authenticator.ts';
import { authenticate } from './middleware/authenticate.ts';
import { openStores } from './middleware/open-stores.ts';
import { runCommand } from './middleware/run-command.ts';
import { validateRequest } from './middleware/validate-request.ts';
import { noRoute } from './no-route.ts';
import { refusal } from './refusal.ts';

/** The largest request body berth reads: a command request is a few hundred bytes. */
export const BODY_LIMIT = 64 * 1024;

export interface AppOptions extends ActDeps {
  /** The routes it answers: the command table's (`routes()` of commands/table.ts). */
  routes: readonly Route[];
  authenticator: Authenticator;
  now?: () => Date;
  /** Aborts when acts still running must stop: `listen()`'s close deadline. */
  stopping?: AbortSignal;
}

/**
 * The Command API: a POST route for each route it is given, from the command table, each the processing
 * order of docs/api.md as Hono middleware (authenticate, validate, open the stores, run
 * the command), and Hono's not-found, without authentication, for anything else.
 * Standards only: it serves Web Requests with Web Responses.
 */
export function createApp(options: AppOptions): HonoBase<ApiEnv> {
  // RegExpRouter alone: the five routes are static paths, which it matches with one map
  // lookup, and the routers Hono's default (SmartRouter) would try beside it are not loaded.
  const app = new HonoBase<ApiEnv>({ router: new RegExpRouter() });
  // The rest of a body over the limit is not wanted: closing the connection spares reading it.
  const limited = bodyLimit({
    maxSize: BODY_LIMIT,
    onError: () => {
      throw refusal('body_too_large', 'the request body is larger than berth reads (64 KiB)', {
        headers: { Connection: 'close' },
      });
    },
  });
  for (const command of options.routes)
    app.post(
      command.route,
      authenticate(options.authenticator),
      limited,
      validateRequest(command),
      openStores(command, options, options),
      runCommand(),
    );
  const noRouteFor = noRoute(options.routes);
  app.notFound((c) =>
    answer(statusOf('no_route'), {
      refused: noRouteFor(c.req.method, targetOf(c.req.raw)),
      code: 'no_route',
    }),
  );
  // Every refusal is thrown as an HTTPException (refusal.ts) and answered here, as is
  // anything berth did not foresee.
  app.onError((error, c) => {
    // Its own Response, whole: getResponse() would copy it into a stream, unframed.
    if (error instanceof HTTPException) return error.res ?? error.getResponse();
    // A body that stopped arriving (its client gone, or cut at the deadline): no one hears this.
    if (c.req.raw.signal.aborted)
      return answer(statusOf('invalid_request'), {
        refused: 'this is not a request berth understands: the body did not arrive whole',
        code: 'invalid_request',
      });
    console.error(`berth api: unexpected ${error.name}: ${error.message}`);
    return answer(statusOf('internal_error'), {
      refused:
        'berth failed unexpectedly while answering; the request may not have been carried out',
      code: 'internal_error',
    });
  });
  return app;
}

/**
 * What a 404 names: the path, or for a CONNECT its authority (`example.com:443`), as
 * Node's server (serve.ts) names the CONNECTs it answers itself. No Request can be made
 * with CONNECT, but a server may hand one on: Deno.serve does, as `http://<authority>`.
 */
function targetOf(request: Request): string {
  if (request.method !== 'CONNECT') return pathOf(request.url);
  const authority = request.url.slice(request.url.indexOf('//') + 2);
  const end = authority.search(/[/?#]/);
  return end < 0 ? authority : authority.slice(0, end);
}

/** The path of a Request's URL, which the Fetch standard keeps serialized: no parse is needed. */
function pathOf(url: string): string {
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}
