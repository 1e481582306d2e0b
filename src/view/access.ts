import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { refusalPage } from './words-page.ts';

/**
 * The one place the view decides who may see it: the token it printed, once in the URL
 * (`/?token=…`), then a cookie that is `HttpOnly` and `SameSite=Strict`. A request with
 * the right token in its URL sets the cookie and is sent to the same URL without it, so
 * the token leaves the address bar and the history. Anything else is refused, in words:
 * 403 with a token that is not the view's, 401 without one.
 */
export function tokenAccess(token: string, cookie: string): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const given = url.searchParams.get('token');
    if (given !== null) {
      if (!same(given, token))
        return c.html(
          refusalPage(
            'Not this view’s token',
            'This address carries a token that is not the one berth view printed when it started (each start prints a new one). Open the address it printed.',
          ),
          403,
        );
      setCookie(c, cookie, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    const kept = getCookie(c, cookie);
    if (kept === undefined || !same(kept, token))
      return c.html(
        refusalPage(
          'The view’s token is needed',
          'berth view shows the fleet only to whoever has the address it printed when it started, with its token. Open that address.',
        ),
        kept === undefined ? 401 : 403,
      );
    await next();
  };
}

/** Whether two texts are the same, in a time that does not tell how much of them matched. */
function same(given: string, token: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(token);
  let differs = a.length ^ b.length;
  for (let at = 0; at < b.length; at++) differs |= (a[at] ?? 0) ^ (b[at] as number);
  return differs === 0;
}

/** A fresh token: 32 random bytes from Web Crypto, as base64url. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}
