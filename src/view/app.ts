import type { Context, MiddlewareHandler } from 'hono';
import { HonoBase } from 'hono/hono-base';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { isName } from '../names.ts';
import { tokenAccess } from './access.ts';
import { fleetPage } from './fleet-page.ts';
import { journalPage } from './journal-page.ts';
import type { Live } from './live.ts';
import { liveStream } from './live-route.ts';
import { LIVE_SCRIPT } from './live-script.ts';
import { nodePage } from './node-page.ts';
import type { Unseen, ViewSource } from './source.ts';
import { STYLE } from './style.ts';
import { wordsPage } from './words-page.ts';

/** The longest URL the view reads: its addresses are short, and a longer one is no page of it. */
export const URL_LIMIT = 2_048;

export interface ViewOptions {
  source: ViewSource;
  live: Live;
  /** The token printed at the start, and the cookie it is kept in. */
  token: string;
  cookie: string;
  /** How the command to copy begins: `berth`, or `berth --state DIR` when the view was given one. */
  berth: string;
  /** Aborts when the view stops: the live streams end. */
  closing: AbortSignal;
}

/**
 * No asset from elsewhere: the page may load only the view's own style sheet and script,
 * and talk only to the view; nothing may frame it, and no address leaves it as a referrer.
 */
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/**
 * berth view's web app: the fleet (`/`), a node (`/nodes/NAME`), the journal (`/journal`),
 * the live stream (`/live`), and its style sheet and script. Read-only: GET and HEAD only.
 */
export function createViewApp(options: ViewOptions): HonoBase {
  const { source } = options;
  const app = new HonoBase({ router: new RegExpRouter() });
  app.use(headers, tokenAccess(options.token, options.cookie), readOnly, shortUrl);
  app.get('/', async (c) => {
    const survey = await source.fleet();
    if ('status' in survey) return unseen(c, 'The fleet cannot be shown', survey);
    return c.html(fleetPage(survey));
  });
  app.get('/nodes/:node', async (c) => {
    const node = c.req.param('node');
    if (!isName(node))
      return c.html(
        wordsPage(
          'No such node',
          `${JSON.stringify(node.slice(0, 80))} is not a node name: names are 1–63 of a-z, 0-9 and -, starting with a letter or digit.`,
          'The fleet page links every node.',
        ),
        404,
      );
    const survey = await source.node(node);
    if ('status' in survey)
      return unseen(c, survey.status === 404 ? 'No such node' : `${node} cannot be shown`, survey);
    return c.html(nodePage(node, survey, options.berth));
  });
  app.get('/journal', async (c) => {
    const filter = {
      node: c.req.query('node') || undefined,
      module: c.req.query('module') || undefined,
    };
    for (const [field, value] of Object.entries(filter))
      if (value !== undefined && !isName(value))
        return c.html(
          wordsPage(
            'Not a filter the journal takes',
            `The ${field} to filter by is a name (1–63 of a-z, 0-9 and -), not ${JSON.stringify(value.slice(0, 80))}.`,
          ),
          400,
        );
    const lines = await source.journal();
    if ('status' in lines) return unseen(c, 'The journal cannot be shown', lines);
    return c.html(journalPage(lines, filter));
  });
  // HEAD has no body to stream, and no page to follow.
  app.get('/live', (c) =>
    c.req.method === 'HEAD'
      ? c.body(null, 200, { 'Content-Type': 'text/event-stream' })
      : liveStream(c, options.live, options.closing),
  );
  app.get('/view.css', (c) => c.body(STYLE, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/live.js', (c) =>
    c.body(LIVE_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }),
  );
  app.notFound((c) =>
    c.html(
      wordsPage(
        'No such page',
        `berth view has no page at ${JSON.stringify(c.req.path.slice(0, 200))}.`,
        'It has the fleet, a page a node, and the journal.',
      ),
      404,
    ),
  );
  app.onError((error, c) =>
    c.html(
      wordsPage(
        'berth view failed',
        `berth view failed unexpectedly while drawing this page: ${error.message}`,
      ),
      500,
    ),
  );
  return app;
}

const headers: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(HEADERS)) c.res.headers.set(name, value);
};

/** Nothing the view serves changes anything: any other method is refused, in words. */
const readOnly: MiddlewareHandler = async (c, next) => {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
  const page = wordsPage(
    'The view only shows',
    `berth view changes nothing, so it answers only GET and HEAD, not ${c.req.method.slice(0, 20)}. To act, run the command a node’s page shows.`,
  );
  return c.html(page, 405, { Allow: 'GET, HEAD' });
};

const shortUrl: MiddlewareHandler = async (c, next) => {
  if (c.req.url.length <= URL_LIMIT) return next();
  return c.html(
    wordsPage(
      'That address is too long',
      `berth view reads addresses of at most ${URL_LIMIT} characters; this one has ${c.req.url.length}.`,
    ),
    414,
  );
};

function unseen(c: Context, title: string, why: Unseen) {
  return c.html(wordsPage(title, why.refused, `(${why.code})`), why.status);
}
