import type { Context, MiddlewareHandler } from 'hono';
import { HonoBase } from 'hono/hono-base';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { isName } from '../model/names.ts';
import { type ViewKeys, viewAccess } from './access.ts';
import { fleetPage } from './fleet-page.ts';
import { journalPage } from './journal-page.ts';
import type { Live } from './live.ts';
import { liveRoute } from './live-route.ts';
import { LIVE_SCRIPT } from './live-script.ts';
import { nodePage } from './node-page.ts';
import { sameOrigin } from './same-origin.ts';
import type { Unseen, ViewSource } from './source.ts';
import { STYLE } from './style.ts';
import { timeOf } from './words.ts';
import { wordsPage } from './words-page.ts';

/** The longest URL the view reads: its addresses are short, and a longer one is no page of it. */
export const URL_LIMIT = 2_048;

export interface ViewOptions {
  source: ViewSource;
  live: Live;
  /** The view's own name, its printed token and its session. */
  keys: ViewKeys;
  /** How the command to copy begins: `berth`, or `berth --state DIR` when the view was given one. */
  berth: string;
  /** Aborts when the view stops: the live streams end. */
  closing: AbortSignal;
}

/**
 * No asset from elsewhere: the page may load only the view's own style sheet and script,
 * and talk only to the view; nothing may frame it, and no address leaves it as a referrer
 * (`same-origin`: a referrer policy of `no-referrer` would make the browser send the
 * survey's own form with `Origin: null`, which could not be told from another page's).
 */
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/**
 * berth view's web app: the fleet (`/`), a node (`/nodes/NAME`), the journal (`/journal`),
 * the live stream (`/live`), and its style sheet and script, all read from the stores
 * (GET and HEAD); and a new survey, asked with a page's button (POST `/survey`).
 */
export function createViewApp(options: ViewOptions): HonoBase {
  const { source, keys } = options;
  const app = new HonoBase({ router: new RegExpRouter() });
  app.use(headers, viewAccess(keys), methods, shortUrl);
  app.get('/', async (c) => {
    const shown = await source.fleet();
    if ('status' in shown) return unseen(c, 'The fleet cannot be shown', shown);
    return c.html(fleetPage(shown, keys.pageToken));
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
    const shown = await source.node(node);
    if ('status' in shown)
      return unseen(c, shown.status === 404 ? 'No such node' : `${node} cannot be shown`, shown);
    return c.html(nodePage(node, shown, options.berth, keys.pageToken));
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
  app.get('/live', liveRoute(options.live, options.closing));
  app.post('/survey', sameOrigin(keys), async (c) => {
    const form = await c.req.parseBody();
    const node = typeof form.node === 'string' && form.node !== '' ? form.node : undefined;
    if (node !== undefined && !isName(node))
      return c.html(
        wordsPage(
          'Not a node to survey',
          `A survey is of the fleet or of one node, named by its name (1–63 of a-z, 0-9 and -), not ${JSON.stringify(node.slice(0, 80))}.`,
        ),
        400,
      );
    const surveyed = await source.survey(node ?? '@all');
    if ('busy' in surveyed)
      return c.html(
        wordsPage(
          'A survey is under way',
          `berth view surveys one thing at a time, and is surveying ${surveyed.busy.target} (asked at ${timeOf(surveyed.busy.since)}): each node's lock is waited for at most --lock-timeout, and each check runs at most its module's timeout. Its results show on the pages when it ends.`,
          'Reload the page in a moment; ask again then if you still need to.',
        ),
        409,
      );
    if ('status' in surveyed)
      return unseen(c, `${node ?? 'The fleet'} cannot be surveyed`, surveyed);
    return c.redirect(node === undefined ? '/' : `/nodes/${node}`, 303);
  });
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

/**
 * Pages are read (GET, HEAD); a survey is asked (POST `/survey`); nothing else is taken, and
 * no route acts: a survey is a preview. Any other method is refused, in words.
 */
const methods: MiddlewareHandler = async (c, next) => {
  const survey = c.req.path === '/survey';
  const method = c.req.method;
  if (survey ? method === 'POST' : method === 'GET' || method === 'HEAD') return next();
  const page = survey
    ? wordsPage(
        'A survey is asked with a button',
        `berth view surveys when a page’s button asks it (POST), not on ${method.slice(0, 20)}: open the fleet or a node, and press “Survey … again”.`,
      )
    : wordsPage(
        'The view only shows',
        `berth view changes nothing, so a page answers only GET and HEAD, not ${method.slice(0, 20)}. To act, run the command a node’s page shows.`,
      );
  return c.html(page, 405, { Allow: survey ? 'POST' : 'GET, HEAD' });
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
