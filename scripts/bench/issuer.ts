// A loopback OAuth 2.0 issuer for the 200 path: OpenID metadata, a JWKS, and ES256 tokens.
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Issuer {
  url: string;
  token(claims: Record<string, unknown>): string;
  close(): Promise<void>;
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export async function startIssuer(): Promise<Issuer> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'ES256', use: 'sig' };
  let url = '';
  const server = createServer((request, response) => {
    const body =
      request.url === '/.well-known/openid-configuration'
        ? { issuer: url, jwks_uri: `${url}/jwks` }
        : request.url === '/jwks'
          ? { keys: [jwk] }
          : undefined;
    response.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    token(claims) {
      const now = Math.floor(Date.now() / 1000);
      const header = base64url(JSON.stringify({ alg: 'ES256', kid: 'bench', typ: 'JWT' }));
      const payload = base64url(JSON.stringify({ iss: url, iat: now, exp: now + 3600, ...claims }));
      const signature = sign('sha256', Buffer.from(`${header}.${payload}`), {
        key: privateKey,
        dsaEncoding: 'ieee-p1363',
      });
      return `${header}.${payload}.${base64url(signature)}`;
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}
