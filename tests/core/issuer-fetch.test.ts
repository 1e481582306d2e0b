/**
 * The issuer is fetched with the fetch its host gives (the Node edge's trusts the state's
 * CA; Deno's would be a Deno.createHttpClient's): metadata and keys alike, and a key
 * replaced under its kid is fetched anew once. Standards only, run by npm test and npm run
 * test:deno alike; the host's fetch here answers from memory, as one over TLS would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { presentedBy } from '../../src/http/authenticator.ts';
import { issuerAuthenticator } from '../../src/http/issuer-authenticator.ts';

const ISSUER = 'https://id.example.org';

const text = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

async function signingKey(kid: string) {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ]);
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { kid, privateKey: pair.privateKey, jwk: { kty, crv, x, y, kid, alg: 'ES256' } };
}

type SigningKey = Awaited<ReturnType<typeof signingKey>>;

/** An ES256 JWT, made by Web Crypto (whose ECDSA signature is JWS's r ‖ s). */
async function token(key: SigningKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const head = base64url(text({ alg: 'ES256', kid: key.kid, typ: 'JWT' }));
  const body = base64url(
    text({ iss: ISSUER, aud: 'berth', sub: 'robot', iat: now, exp: now + 300 }),
  );
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    key.privateKey,
    new TextEncoder().encode(`${head}.${body}`),
  );
  return `${head}.${body}.${base64url(new Uint8Array(signature))}`;
}

describe("the issuer fetched with its host's fetch, on every runtime", () => {
  it('asks for the metadata and the keys through it, and again once for a key replaced under its kid', async () => {
    let published = [await signingKey('one')];
    const asked: string[] = [];
    const hostFetch: typeof fetch = async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      asked.push(url);
      if (url === `${ISSUER}/.well-known/openid-configuration`)
        return Response.json({ issuer: ISSUER, jwks_uri: `${ISSUER}/keys` });
      if (url === `${ISSUER}/keys`) return Response.json({ keys: published.map((key) => key.jwk) });
      return new Response('{}', { status: 404 });
    };
    const authenticator = issuerAuthenticator({
      issuer: ISSUER,
      audience: 'berth',
      fetch: hostFetch,
      timing: { keyCooldownMs: 0 },
    });
    const decide = async (bearer: string) => {
      const request = new Request('http://berth/assign', {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}` },
      });
      const decision = authenticator.authenticate(presentedBy(request));
      return typeof decision === 'function' ? decision() : decision;
    };
    assert.deepEqual(await decide(await token(published[0] as SigningKey)), {
      ok: true,
      subject: 'robot',
    });
    assert.deepEqual(asked, [`${ISSUER}/.well-known/openid-configuration`, `${ISSUER}/keys`]);
    const replaced = published[0];
    published = [await signingKey('one')];
    assert.deepEqual(await decide(await token(published[0] as SigningKey)), {
      ok: true,
      subject: 'robot',
    });
    assert.equal(asked.length, 3, 'the keys fetched anew, once');
    const old = await decide(await token(replaced as SigningKey));
    assert.equal(old.ok, false);
  });
});
