import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey, jwtVerify } from 'jose';
import * as v from 'valibot';
import { hasControl } from '../utils/one-line.ts';
import {
  type Authentication,
  type Authenticator,
  bearerChallenge,
  bearerToken,
  type Decision,
  noIdentityProvider,
} from './authenticator.ts';
import { isCanonicalCompact } from './base64url.ts';

/**
 * The signatures berth accepts: asymmetric only. `none` proves nothing, and an HS*
 * token could be forged by anyone who holds the issuer's public key used as a secret.
 */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** Clocks drift between the issuer and berth: `exp` and `nbf` hold within this. */
const LEEWAY_SECONDS = 30;

export interface Timing {
  /** Every fetch of metadata or keys gives up after this. */
  fetchTimeoutMs: number;
  /**
   * Tokens naming a key berth does not have, or whose signature fails with the key they
   * name, refetch the keys at most once per this.
   */
  keyCooldownMs: number;
  /** After the issuer could not be had, it is tried again no sooner than this. */
  retryMs: number;
}

const TIMING: Timing = { fetchTimeoutMs: 5_000, keyCooldownMs: 30_000, retryMs: 5_000 };

export interface IssuerOptions {
  /** `--issuer`, exactly as given: the metadata's `issuer` and every token's `iss` must equal it. */
  issuer: string;
  /** `--audience`: every token's `aud` must hold it. */
  audience: string;
  /** Where the operator learns why the issuer cannot be used; callers only get the words of docs/api.md. */
  log?: (line: string) => void;
  /** The defaults are TIMING; tests shorten them rather than wait 30 s. */
  timing?: Partial<Timing>;
  /**
   * How the issuer's metadata and keys are fetched: the runtime's fetch by default. A host
   * gives one that trusts the CAs the issuer's certificate may be signed by (the state's,
   * `--issuer-ca`): Node's edge an undici agent's, Deno a `Deno.createHttpClient`'s.
   */
  fetch?: typeof fetch;
}

/**
 * Why `--issuer` cannot name an issuer berth would believe, or undefined when it can:
 * an absolute URL, with no query, fragment or credentials, over https or on loopback.
 */
export function unusableIssuer(issuer: string): string | undefined {
  const url = URL.canParse(issuer) && issuer === issuer.trim() ? new URL(issuer) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    return `--issuer takes the issuer's URL, like https://id.example.org/realms/berth, not ${JSON.stringify(issuer)}`;
  if (url.search || url.hash || url.username || url.password)
    return `--issuer takes the issuer's URL without a query, fragment or credentials, not ${JSON.stringify(issuer)}`;
  if (!safeToFetch(url))
    return `berth believes tokens only from an https issuer (plain http only on loopback: 127.0.0.0/8, ::1, localhost), not ${issuer}`;
  return undefined;
}

/** https, or plain http to this machine's loopback, where no one else is on the wire. */
function safeToFetch(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  const host = url.hostname;
  return (
    url.protocol === 'http:' &&
    (host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host))
  );
}

/**
 * Where the issuer's metadata may be, in the order berth asks: OpenID Connect
 * Discovery appends its well-known path to the issuer; RFC 8414 inserts its own
 * between the host and the issuer's path. Both drop one terminating `/` first.
 */
export function metadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/$/, '');
  return [
    new URL(`${issuer.origin}${path}/.well-known/openid-configuration`),
    new URL(`${issuer.origin}/.well-known/oauth-authorization-server${path}`),
  ];
}

/** The metadata or keys cannot be had; the words are for the operator's log. */
class Unavailable extends Error {}

type Keys = ReturnType<typeof createRemoteJWKSet>;

/**
 * Accepts OAuth 2.0 bearer tokens (JWTs) signed by the issuer's published keys and
 * meant for berth; the subject a request acts as is the token's `sub`. While the
 * issuer's metadata or keys cannot be had, every request gets the 401 that says so.
 * Standards only: Web fetch, URL and jose.
 */
export function issuerAuthenticator(options: IssuerOptions): Authenticator {
  const { issuer, audience } = options;
  const why = unusableIssuer(issuer);
  if (why) throw new TypeError(why);
  const timing = { ...TIMING, ...options.timing };
  const log = options.log ?? (() => {});
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));

  let keys: Keys | undefined;
  let failedAt = Number.NEGATIVE_INFINITY;
  let discovering: Promise<Keys | undefined> | undefined;
  let lastLogged = '';
  const tell = (line: string) => {
    // A line per change, not per attempt: an issuer down for a day is one line, not 17,000.
    if (line !== lastLogged) log(line);
    lastLogged = line;
  };

  /** The issuer's keys, discovered once at a time; none while the retry cooldown runs. */
  function currentKeys(): Promise<Keys | undefined> {
    if (keys) return Promise.resolve(keys);
    if (discovering) return discovering;
    if (Date.now() - failedAt < timing.retryMs) return Promise.resolve(undefined);
    discovering = discover(issuer, timing, fetcher)
      .then(
        (found) => {
          keys = found.keys;
          tell(`berth api: verifying tokens from ${issuer} with the keys at ${found.jwksUri}`);
          return keys;
        },
        (error: unknown) => {
          lostIssuer(undefined, error);
          return undefined;
        },
      )
      .finally(() => {
        discovering = undefined;
      });
    return discovering;
  }

  function lostIssuer(failed: Keys | undefined, error: unknown) {
    if (keys === failed) keys = undefined;
    failedAt = Date.now();
    const reason = error instanceof Unavailable ? error.message : `${error}`;
    tell(`berth api: the issuer ${issuer} cannot be used: ${reason}`);
  }

  // The 401 while no identity provider answers: made once, with a token and without,
  // so that its body is put into words once too (see the authenticate middleware).
  const noProvider = noIdentityProvider(issuer);
  const unavailableWithToken: Authentication = {
    ok: false,
    refused: noProvider,
    challenge: bearerChallenge({ code: 'invalid_token', description: noProvider }),
  };
  const unavailableWithout: Authentication = {
    ok: false,
    refused: noProvider,
    challenge: bearerChallenge(),
  };
  const unavailable = (token: string | undefined): Authentication =>
    token ? unavailableWithToken : unavailableWithout;
  const invalid = (code: string, refused: string): Authentication => ({
    ok: false,
    refused,
    challenge: bearerChallenge({ code, description: refused }),
  });
  const noToken: Authentication = {
    ok: false,
    refused: `berth needs a bearer token from ${issuer}: send "Authorization: Bearer <token>"`,
    challenge: bearerChallenge(),
  };
  const tokenInQuery = invalid(
    'invalid_request',
    'berth reads a token only from the Authorization header, never from the query string: send "Authorization: Bearer <token>"',
  );

  return {
    authenticate({ authorization, url }) {
      const token = bearerToken(authorization);
      // Keys in hand are used at once; only a discovery is waited for.
      if (keys) return checkToken(keys, token, url);
      // While the issuer is known to be down, until the next try, the answer is known at
      // once, with nothing awaited.
      if (!discovering && Date.now() - failedAt < timing.retryMs) return unavailable(token);
      return () =>
        currentKeys().then((found) => {
          if (!found) return unavailable(token);
          const decision = checkToken(found, token, url);
          return typeof decision === 'function' ? decision() : decision;
        });
    },
  };

  /** Refusals known without the keys' help come back at once; only a verification is awaited. */
  function checkToken(found: Keys, token: string | undefined, url: string): Decision {
    if (hasQueryToken(url)) return tokenInQuery;
    if (!token) return noToken;
    return () => verifyToken(found, token);
  }

  /**
   * `again` after the keys were fetched anew for this token: a key the issuer replaced
   * under the same kid fails the signature with the old one berth has.
   */
  async function verifyToken(found: Keys, token: string, again = false): Promise<Authentication> {
    try {
      const { payload } = await jwtVerify(token, keysOrUnavailable(found), {
        algorithms: ALGORITHMS,
        issuer,
        audience,
        requiredClaims: ['exp'],
        clockTolerance: LEEWAY_SECONDS,
      });
      if (!isCanonicalCompact(token))
        return invalid(
          'invalid_token',
          'the token is not in canonical base64url (RFC 7515: three parts of A-Z a-z 0-9 - _, without padding or spaces, and no bits set past the last byte)',
        );
      if (typeof payload.sub !== 'string' || payload.sub === '')
        return invalid(
          'invalid_token',
          'the token names no subject (sub), so berth cannot say who acts',
        );
      if (hasControl(payload.sub))
        // The journal and `berth log` name the subject as who acted: a line break in it
        // could write a line that reads as another act.
        return invalid(
          'invalid_token',
          "the token's subject (sub) holds a line break or another control character; berth will not journal it as who acts",
        );
      return { ok: true, subject: payload.sub };
    } catch (error) {
      if (error instanceof Unavailable) {
        lostIssuer(found, error);
        return unavailable(token);
      }
      // Once a cooldown, as for a kid berth does not know: forged signatures cannot make
      // berth ask the issuer more often than that.
      if (error instanceof errors.JWSSignatureVerificationFailed && !again && !found.coolingDown) {
        try {
          await found.reload();
        } catch (failed) {
          lostIssuer(found, new Unavailable(`its keys cannot be fetched: ${described(failed)}`));
          return unavailable(token);
        }
        return verifyToken(found, token, true);
      }
      return invalid('invalid_token', tokenRefusal(error, issuer, audience));
    }
  }
}

/**
 * Whether the URL's query names an access_token (RFC 6750 §2.3), which berth refuses to
 * read. The URL may be a target as sent (a path and query): the base only completes it.
 */
function hasQueryToken(url: string): boolean {
  // Most requests have no query: no URL to parse for them.
  return url.includes('?') && new URL(url, 'http://berth').searchParams.has('access_token');
}

/**
 * The key set, with the failures that mean "the keys cannot be had" (a refetch that
 * was refused, timed out, or did not answer a key set) told apart from the token's own.
 */
function keysOrUnavailable(keys: Keys): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await keys(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys ||
        error instanceof errors.JOSENotSupported
      )
        throw error;
      throw new Unavailable(`its keys cannot be fetched: ${described(error)}`);
    }
  };
}

async function discover(
  issuer: string,
  timing: Timing,
  fetcher: typeof fetch,
): Promise<{ keys: Keys; jwksUri: string }> {
  const jwksUri = await fetchJwksUri(issuer, timing, fetcher);
  const keys = createRemoteJWKSet(jwksUri, {
    timeoutDuration: timing.fetchTimeoutMs,
    cooldownDuration: timing.keyCooldownMs,
    [customFetch]: fetcher,
  });
  try {
    await keys.reload();
  } catch (error) {
    throw new Unavailable(`its keys at ${jwksUri} cannot be fetched: ${described(error)}`);
  }
  return { keys, jwksUri: jwksUri.href };
}

/**
 * What berth reads of an issuer's metadata (RFC 8414, OpenID Connect Discovery): who it
 * is and where its keys are. Every other field is the issuer's business.
 */
const IssuerMetadataSchema = v.looseObject({
  /** Compared as given: a metadata document naming another issuer, or none, is said as it is. */
  issuer: v.optional(v.unknown()),
  jwks_uri: v.optional(v.string()),
});

/** The `jwks_uri` of the first metadata document that names exactly this issuer. */
async function fetchJwksUri(issuer: string, timing: Timing, fetcher: typeof fetch): Promise<URL> {
  const faults: string[] = [];
  for (const url of metadataUrls(new URL(issuer))) {
    let metadata: unknown;
    try {
      const response = await fetcher(url, {
        headers: { accept: 'application/json' },
        // A redirect could lead off https; the metadata is asked for where the RFCs put it.
        redirect: 'manual',
        signal: AbortSignal.timeout(timing.fetchTimeoutMs),
      });
      if (response.status !== 200) {
        faults.push(`${url} answered ${response.status}`);
        continue;
      }
      metadata = await response.json();
    } catch (error) {
      if (error instanceof SyntaxError) {
        faults.push(`${url} did not answer JSON`);
        continue;
      }
      // Unreachable or too slow: the other well-known path is on the same host.
      throw new Unavailable(`${url} cannot be fetched: ${described(error)}`);
    }
    const fields = v.safeParse(IssuerMetadataSchema, metadata);
    const named = fields.success ? fields.output : { issuer: undefined, jwks_uri: undefined };
    if (named.issuer !== issuer) {
      faults.push(`${url} names issuer ${JSON.stringify(named?.issuer)}, not ${issuer}`);
      continue;
    }
    const jwksUri =
      named.jwks_uri !== undefined && URL.canParse(named.jwks_uri)
        ? new URL(named.jwks_uri)
        : undefined;
    if (!jwksUri || !safeToFetch(jwksUri)) {
      faults.push(`${url} names no https jwks_uri`);
      continue;
    }
    return jwksUri;
  }
  throw new Unavailable(faults.join('; '));
}

/**
 * Why a fetch failed, in the same words on every runtime: Node's fetch says "fetch
 * failed" with a `cause.code` (ECONNREFUSED), Deno's the same message with the reason
 * only in its cause's words ("tcp connect error: Connection refused"). The common
 * reasons are named from either; any other is the message, with Node's code if any.
 */
function described(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error instanceof errors.JWKSTimeout) return 'timed out';
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const words = typeof cause?.message === 'string' ? cause.message : '';
  for (const [codes, pattern, reason] of NETWORK_REASONS)
    if ((code !== undefined && codes.test(code)) || pattern.test(words)) return reason;
  return code === undefined ? error.message : `${error.message} (${code})`;
}

/** Node's codes, Deno's words, and what berth says for both. */
const NETWORK_REASONS: [RegExp, RegExp, string][] = [
  [/^ECONNREFUSED$/, /connection refused/i, 'the connection was refused'],
  [
    /^(ENOTFOUND|EAI_AGAIN)$/,
    /dns error|failed to lookup address/i,
    'its host name does not resolve',
  ],
  [/^(ECONNRESET|EPIPE)$/, /connection reset|broken pipe/i, 'the connection was reset'],
  [
    /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/,
    /certificate/i,
    'its TLS certificate is not trusted',
  ],
];

/**
 * The caller's reason for a token berth will not accept. Claim values are shown only
 * once the signature has verified (they are then the issuer's words, not the
 * caller's), and never the token itself.
 */
function tokenRefusal(error: unknown, issuer: string, audience: string): string {
  if (error instanceof errors.JOSEAlgNotAllowed)
    return `the token is not signed with an algorithm berth accepts (${ALGORITHMS.join(', ')}; never none, never HS*)`;
  if (error instanceof errors.JWKSNoMatchingKey)
    return `the token is signed with a key that ${issuer} does not publish`;
  if (error instanceof errors.JWKSMultipleMatchingKeys)
    return `the token names no key (kid), and ${issuer} publishes more than one it could be`;
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return `the token's signature does not verify with the keys of ${issuer}`;
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return 'the token is not a signed JWT (three base64url parts: header.payload.signature)';
  if (error instanceof errors.JWTExpired)
    return `the token has expired (at ${dateOf(error.payload.exp)}); get a new one from ${issuer}`;
  if (error instanceof errors.JWTClaimValidationFailed) {
    const { claim, reason, payload } = error;
    if (reason === 'invalid') return `the token's ${claim} is not a time in seconds`;
    if (claim === 'exp')
      return 'the token has no expiry (exp); berth accepts only tokens that expire';
    if (claim === 'nbf') return `the token is not valid yet (not before ${dateOf(payload.nbf)})`;
    if (claim === 'iss' && reason === 'missing')
      return `the token names no issuer (iss); berth accepts tokens from ${issuer}`;
    if (claim === 'iss') return `the token is from issuer ${shown(payload.iss)}, not ${issuer}`;
    if (claim === 'aud' && reason === 'missing')
      return `the token names no audience (aud); berth needs ${audience}`;
    if (claim === 'aud') return `the token is for audience ${shown(payload.aud)}, not ${audience}`;
    return `the token's ${claim} claim does not hold`;
  }
  if (error instanceof errors.JOSENotSupported)
    return 'the token uses a JOSE feature berth does not support';
  return `the token cannot be verified with the keys of ${issuer}`;
}

function dateOf(seconds: unknown): string {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : String(seconds);
}

/** A claim value as words, cut short: an issuer's claim is still no place for an essay. */
function shown(value: unknown): string {
  const text = Array.isArray(value) ? value.map(String).join(', ') : String(value);
  return text.length > 120 ? `${text.slice(0, 120)}...` : text;
}
