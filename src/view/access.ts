import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { timeOf } from './words.ts';
import { refusalPage } from './words-page.ts';

/** The session's cookie: for the view's own name alone, so no other server is sent it. */
export const SESSION_COOKIE = 'berth_view';

/**
 * What lets a browser in, all new at each start: the view's own name (`v-<random>`, under
 * `.localhost`, which browsers resolve to loopback), the token printed with it, spent on
 * its first use, and the session it is exchanged for, with the token of its pages' forms.
 */
export class ViewKeys {
  readonly name = `v-${randomText(20, BASE32)}.localhost`;
  readonly token = randomText(43, BASE64URL);
  /** When the printed token was spent: it lets no one in again. */
  spent: Date | undefined;
  session: string | undefined;
  /** The token a page's form carries back: a POST of another page than the view's lacks it. */
  readonly pageToken = randomText(43, BASE64URL);

  /** Spends the printed token for a session of another value: once. */
  spend(now: Date): string {
    this.spent = now;
    this.session = randomText(43, BASE64URL);
    return this.session;
  }
}

/**
 * The one place the view decides who may see it, in front of every route:
 *
 * - the Host must be the view's own name (any port, for a forwarded one): a page that
 *   reaches the port under another name (127.0.0.1, a name rebound to loopback) is 403;
 * - the printed token, in the URL (`/?token=…`), is spent on its first use for a session
 *   cookie of another value (`HttpOnly`, `SameSite=Strict`, for this host alone), and the
 *   browser is sent to the same URL without it; used again it is refused, saying it was;
 * - anything else needs the session's cookie: 401 without one, 403 with another.
 *
 * A refusal never names the view's own name: whoever learnt it could have the browser
 * send its cookie to a server of theirs under that name.
 */
export function viewAccess(keys: ViewKeys, now: () => Date = () => new Date()): MiddlewareHandler {
  return async (c, next) => {
    if (!isOwnHost(c, keys.name))
      return refuse(
        c,
        403,
        'Not this view’s address',
        'berth view answers only at the address of its own it printed when it started (http://v-….localhost:PORT/), not at another name for this machine. Open the address it printed.',
      );
    const url = new URL(c.req.url);
    const given = url.searchParams.get('token');
    const kept = getCookie(c, SESSION_COOKIE);
    const inSession = kept !== undefined && keys.session !== undefined && same(kept, keys.session);
    if (given !== null) {
      if (!same(given, keys.token))
        return refuse(
          c,
          403,
          'Not this view’s token',
          'This address carries a token that is not the one berth view printed when it started (each start prints a new one). Open the address it printed.',
        );
      url.searchParams.delete('token');
      const clean = `${url.pathname}${url.search}`;
      if (keys.spent === undefined) {
        const session = keys.spend(now());
        setCookie(c, SESSION_COOKIE, session, { httpOnly: true, sameSite: 'Strict', path: '/' });
        return c.redirect(clean, 303);
      }
      // The browser that spent it is in already; anyone else is refused.
      if (inSession) return c.redirect(clean, 303);
      return refuse(
        c,
        403,
        'This address was already used',
        `The token in this address was already used, at ${timeOf(keys.spent)}: berth view lets its printed address in once, so that it cannot be used again from a browser's history or by whoever saw it. Use the browser that opened it, or start berth view again for a new address.`,
      );
    }
    if (!inSession)
      return refuse(
        c,
        kept === undefined ? 401 : 403,
        'The view’s token is needed',
        'berth view shows the fleet only to the browser that opened the address it printed when it started, with its token. Open that address.',
      );
    await next();
  };
}

/** Whether the request names the view's own host, in its Host and its URL alike. */
function isOwnHost(c: Context, name: string): boolean {
  const host = c.req.header('host')?.toLowerCase() ?? '';
  const colon = host.lastIndexOf(':');
  const bare = colon === -1 ? host : host.slice(0, colon);
  if (bare !== name || (colon !== -1 && !/^\d{1,5}$/.test(host.slice(colon + 1)))) return false;
  return new URL(c.req.url).hostname === name;
}

function refuse(c: Context, status: 401 | 403, title: string, words: string) {
  return c.html(refusalPage(title, words), status);
}

/** Whether two texts are the same, in a time that does not tell how much of them matched. */
export function same(given: string, token: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(token);
  let differs = a.length ^ b.length;
  for (let at = 0; at < b.length; at++) differs |= (a[at] ?? 0) ^ (b[at] as number);
  return differs === 0;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `length` characters of `alphabet` (of 32 or 64), each from a random byte of Web Crypto. */
function randomText(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}
