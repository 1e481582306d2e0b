/** Who a request acts as, or why it may not act at all. */
export type Authentication =
  | { ok: true; subject: string }
  | { ok: false; refused: string; challenge: string };

/**
 * Decides who a request on the five routes acts as. It reads the request's headers and
 * URL, never its body. A decision needing nothing awaited (no token at all) may come back
 * at once, so that the commonest refusal costs no promise.
 */
export interface Authenticator {
  authenticate(request: Request): Authentication | Promise<Authentication>;
}

/** The seed's words for the case it describes: no identity provider is running. */
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

/** Reads the bearer token from the one place berth looks: the Authorization header. */
export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  const match = header ? /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
  return match?.[1];
}
