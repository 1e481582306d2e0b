import type { MiddlewareHandler } from 'hono';
import type { ViewKeys } from './access.ts';
import { same } from './access.ts';
import { wordsPage } from './words-page.ts';

/** The most a form of the view sends: its page token and a node's name. */
const FORM_LIMIT = 1_024;

/**
 * A POST is one of the view's own pages' forms, or nothing: its Origin must be the view's
 * (the scheme and the Host it was sent to), its `Sec-Fetch-Site` `same-origin`, and its
 * form must carry the page token. A page of another origin meets 403, in words; the
 * cookie (`SameSite=Strict`) is not even sent from another site.
 */
export function sameOrigin(keys: ViewKeys): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    const own = `http://${c.req.header('host')}`;
    const length = Number(c.req.header('content-length') ?? Number.NaN);
    const form =
      length <= FORM_LIMIT &&
      c.req.header('content-type')?.startsWith('application/x-www-form-urlencoded')
        ? await c.req.parseBody().catch(() => undefined)
        : undefined;
    const check = form?.check;
    const why =
      origin !== own
        ? `it comes from ${origin === undefined ? 'a page that does not say where it is' : JSON.stringify(origin.slice(0, 100))}, not from the view's own pages`
        : site !== 'same-origin'
          ? `the browser says it comes from ${site === undefined ? 'no site it names' : JSON.stringify(site.slice(0, 40))}, not from the view's own pages`
          : typeof check !== 'string' || !same(check, keys.pageToken)
            ? 'it does not carry the token of the page it was sent from (the view was started again since that page was drawn, or the request is not a form of the view)'
            : undefined;
    if (why === undefined) return next();
    return c.html(
      wordsPage(
        'Not asked from the view’s own page',
        `berth view refused this request because ${why}. Ask from the view’s own page: reload it, then press its button.`,
      ),
      403,
    );
  };
}
