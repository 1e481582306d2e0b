import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
} from 'jose';

/** A signing key of the issuer's, and its public half as the JWKS publishes it. */
export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function makeKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

/**
 * How the issuer answers. `up` serves its metadata and keys; the others are the ways
 * an identity provider can fail to be had short of being down (a closed port). A request
 * met by `hang` is held until `release()`.
 */
export type Behaviour = 'up' | 'hang' | 'not-json' | 'wrong-issuer';

/**
 * A real OAuth 2.0 issuer on loopback: node:http serving metadata and a JWKS, with
 * keys made by jose. It counts every request by path, so tests can see fetches.
 */
export interface Issuer {
  /** The issuer identifier, exactly what berth is told with --issuer. */
  url: string;
  port: number;
  behaviour: Behaviour;
  /** The keys the JWKS publishes; the first signs unless told otherwise. */
  published: SigningKey[];
  /** Requests seen, by path. */
  hits(path: string): number;
  /** Answers every request held by `hang` as the issuer now behaves. */
  release(): void;
  jwksPath: string;
  /** A token for berth as `sub`, valid for five minutes, with `claims` laid over. */
  token(claims?: JWTPayload, key?: SigningKey, header?: Record<string, unknown>): Promise<string>;
  /** Stops listening, as an identity provider that is down: its port refuses connections. */
  down(): Promise<void>;
  /** Listens again on the same port, with the same keys: the identity provider is back. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export interface IssuerOptions {
  /** Listen on this port (to bring up an issuer that berth was told about while it was down). */
  port?: number;
  /** The issuer's path component, as Keycloak's `/realms/NAME`. */
  path?: string;
  /** Which well-known document it serves: OpenID Connect Discovery's or RFC 8414's. */
  discovery?: 'openid' | 'oauth';
  /** Serve https with this key and certificate (PEM), as an issuer off loopback must. */
  tls?: { key: string; cert: string };
}

/**
 * The key every issuer of a test process signs with unless told otherwise: an RSA key
 * takes up to a second to make on a busy machine. Issuers still never take each other's
 * tokens: each token names its issuer.
 */
let firstKey: Promise<SigningKey> | undefined;

export async function startIssuer(options: IssuerOptions = {}): Promise<Issuer> {
  const path = options.path ?? '';
  firstKey ??= makeKey('key-1');
  const key = await firstKey;
  const counts = new Map<string, number>();
  let url = '';
  const jwksPath = `${path}/keys`;
  const metadataPath =
    options.discovery === 'oauth'
      ? `/.well-known/oauth-authorization-server${path}`
      : `${path}/.well-known/openid-configuration`;

  const held: (() => void)[] = [];
  const serve = (request: import('node:http').IncomingMessage, response: ServerResponse) => {
    const asked = new URL(request.url ?? '/', 'http://issuer').pathname;
    counts.set(asked, (counts.get(asked) ?? 0) + 1);
    if (issuer.behaviour === 'hang') held.push(() => answer(asked, response));
    else answer(asked, response);
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, serve) : createServer(serve);
  const answer = (asked: string, response: ServerResponse) => {
    const json = (body: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (issuer.behaviour === 'not-json') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>an identity provider that is still starting up</html>');
    } else if (asked === metadataPath) {
      json({
        issuer: issuer.behaviour === 'wrong-issuer' ? `${url}/elsewhere` : url,
        jwks_uri: `${scheme}://127.0.0.1:${port}${jwksPath}`,
        token_endpoint: `${url}/token`,
      });
    } else if (asked === jwksPath) {
      json({ keys: issuer.published.map((published) => published.jwk) });
    } else {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{}');
    }
  };
  const listen = (on: number) =>
    new Promise<void>((listening) => server.listen(on, '127.0.0.1', () => listening()));
  const stop = () =>
    new Promise<void>((closed) => {
      server.close(() => closed());
      server.closeAllConnections();
    });
  await listen(options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const scheme = options.tls ? 'https' : 'http';
  url = `${scheme}://127.0.0.1:${port}${path}`;

  const issuer: Issuer = {
    url,
    port,
    behaviour: 'up',
    published: [key],
    jwksPath,
    hits: (asked) => counts.get(asked) ?? 0,
    release() {
      for (const again of held.splice(0)) again();
    },
    async token(claims = {}, signer = key, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: url,
        aud: 'berth',
        sub: 'alice@example.org',
        iat: now,
        exp: now + 300,
        ...claims,
      })
        .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'JWT', ...header })
        .sign(signer.privateKey);
    },
    down: stop,
    up: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
  return issuer;
}

/** A port that was free a moment ago: where an issuer is down now and comes up later. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', () => listening()));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

const base64url = (text: string | Uint8Array) => Buffer.from(text).toString('base64url');

/** A token that claims to need no signature at all. */
export function unsignedToken(claims: JWTPayload): string {
  return `${base64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}.`;
}

/** The classic confusion attack: HS256, keyed with the issuer's public key (as PEM text). */
export async function hmacWithPublicKey(key: SigningKey, claims: JWTPayload): Promise<string> {
  const secret = new TextEncoder().encode(await exportSPKI(key.publicKey));
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(secret);
}

/** The same token with one byte of its signature flipped. */
export function flipSignatureByte(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(signature, 'base64url');
  bytes[10] = (bytes[10] as number) ^ 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}
