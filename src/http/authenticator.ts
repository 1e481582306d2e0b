/** Who a request acts as, or why it may not act at all. */
export type Authentication =
  | { ok: true; subject: string }
  | { ok: false; refused: string; challenge: string };

/**
 * What an authenticator decides as it is asked: who acts or why not, when that needs
 * nothing awaited (no token at all, no identity provider for now); else how to wait for
 * it (the issuer's keys, a token's signature), begun only when called.
 */
export type Decision = Authentication | (() => Promise<Authentication>);

/**
 * What an authenticator reads of a request: its Authorization header (undefined when it
 * has none) and its URL (or its target as sent, a path and query), never its body.
 */
export interface Presented {
  authorization: string | undefined;
  url: string;
}

/**
 * Decides who a request on the five routes acts as, from what the request presents; the
 * routes' first middleware (middleware/authenticate.ts) is the one that asks.
 */
export interface Authenticator {
  authenticate(presented: Presented): Decision;
}

/** What a Request presents: its Authorization header and its URL. */
export function presentedBy(request: Request): Presented {
  return { authorization: request.headers.get('authorization') ?? undefined, url: request.url };
}

/** The 401's words while no identity provider is running (docs/api.md). */
export function noIdentityProvider(issuer: string): string {
  return `berth cannot yet verify a token from ${issuer}: the identity provider is a module, and none is running; use the berth command line instead`;
}

/** An RFC 6750 challenge; a request that carried no token gets no error code. */
export function bearerChallenge(error?: { code: string; description: string }): string {
  if (!error) return 'Bearer realm="berth"';
  // RFC 6750 allows printable ASCII less `"` and `\` here; anything else (a claim
  // value in another script, a line break) would break the header.
  const description = error.description.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  return `Bearer realm="berth", error="${error.code}", error_description="${description}"`;
}

const BEARER = /^Bearer[ ]+([^ ]+)[ ]*$/i;

/** Reads the bearer token from the one place berth looks: the Authorization header. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization ? BEARER.exec(authorization) : null;
  return match?.[1];
}
