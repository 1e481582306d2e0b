import { HonoBase } from 'hono/hono-base';
import type { CommandContext } from '../commands/context.ts';
import { type Command, commands, missingFields, runCommand } from '../commands/table.ts';
import type { ReachMachine } from '../machines/machine.ts';
import { decodeRequest } from '../request.ts';
import type { Settings } from '../settings.ts';
import { type OpenStores, StoreError, type Stores, storesCannotOpen } from '../stores/stores.ts';
import type { Authentication, Authenticator } from './authenticator.ts';
import { ExactRouter } from './exact-router.ts';
import { readBody } from './read-body.ts';

export interface AppOptions {
  authenticator: Authenticator;
  openStores: OpenStores;
  /** How the commands reach each node's machine, from the inventory. */
  machines: (settings: Settings) => ReachMachine;
  now?: () => Date;
  /** Aborts when acts still running must stop: `listen()`'s close deadline. */
  stopping?: AbortSignal;
}

const ROUTES = commands.map((command) => `POST ${command.route}`).join(', ');

/** The 404 words: the method and path asked for, and the five routes berth answers. */
export function noRoute(method: string, path: string): string {
  return `no route for ${method} ${path}; berth answers ${ROUTES}`;
}

/**
 * The Command API: five POST routes made from the command table, each in the
 * seed's order (authenticate, decode, required fields, open the stores, run), and
 * 404 for anything else. Standards only: it serves Web Requests with Web Responses.
 */
export function createApp(options: AppOptions): HonoBase {
  const app = new HonoBase({ router: new ExactRouter() });
  for (const command of commands)
    app.post(command.route, (c): Response | Promise<Response> => {
      const request = c.req.raw;
      const who = options.authenticator.authenticate(request);
      return who instanceof Promise
        ? who.then((known) => serveCommand(command, request, known, options))
        : serveCommand(command, request, who, options);
    });
  app.all('*', (c) => answer(404, { refused: noRoute(c.req.method, pathOf(c.req.url)) }));
  app.onError((error, c) => {
    console.error(`berth api: unexpected ${error.name}: ${error.message}`);
    return c.json(
      {
        refused:
          'berth failed unexpectedly while answering; the request may not have been carried out',
      },
      500,
    );
  });
  return app;
}

/** A refusal of the caller is answered at once; anything else reads the body and goes on. */
function serveCommand(
  command: Command,
  request: Request,
  who: Authentication,
  options: AppOptions,
): Response | Promise<Response> {
  if (!who.ok) return answer(401, { refused: who.refused }, { 'WWW-Authenticate': who.challenge });
  return carryOut(command, request, who.subject, options);
}

async function carryOut(
  command: Command,
  request: Request,
  actor: string,
  options: AppOptions,
): Promise<Response> {
  const body = await readBody(request);
  if (!body.ok) {
    if ('tooLarge' in body)
      // The rest of the body is not wanted: closing the connection spares reading it.
      return answer(
        413,
        { refused: 'the request body is larger than berth reads (64 KiB)' },
        { Connection: 'close' },
      );
    return answer(400, { refused: `this is not a request berth understands: ${body.message}` });
  }
  const decoded = decodeRequest(body.text);
  if (!decoded.ok)
    return answer(400, { refused: `this is not a request berth understands: ${decoded.message}` });
  const missing = missingFields(command, decoded.request);
  if (missing) return answer(400, { refused: missing });

  let stores: Stores;
  try {
    stores = await options.openStores({ node: decoded.request.node });
  } catch (error) {
    return answer(503, { refused: storesCannotOpen(error) });
  }
  try {
    const context: CommandContext = {
      stores,
      reach: options.machines(stores.settings),
      actor,
      via: 'api',
      now: options.now ?? (() => new Date()),
      mint: [],
      signal: options.stopping,
    };
    const outcome = await runCommand(command, decoded.request, context);
    if (outcome.error !== undefined)
      return answer(409, { said: outcome.said, refused: outcome.error });
    return answer(200, { said: outcome.said });
  } catch (error) {
    if (error instanceof StoreError) return answer(503, { refused: storesCannotOpen(error) });
    throw error;
  } finally {
    await stores.close().catch(() => {});
  }
}

/** The path of a Request's URL, which the Fetch standard keeps serialized: no parse is needed. */
function pathOf(url: string): string {
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

function answer(status: number, body: object, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}
