/**
 * The issuer authenticator's words when the issuer cannot be reached, the same on Node
 * and Deno: their fetch errors differ (Node gives a `cause.code`, Deno only words), the
 * operator's log line does not. Run by npm test and npm run test:deno alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noIdentityProvider, presentedBy } from '../../src/http/authenticator.ts';
import { issuerAuthenticator } from '../../src/http/issuer-authenticator.ts';

/** Port 2 of loopback: nothing listens there (and it is not one fetch refuses to ask). */
const CLOSED = 'http://127.0.0.1:2';

describe('an issuer that cannot be reached, on every runtime', () => {
  it('is the 401\'s words to the caller, and "the connection was refused" to the operator', async () => {
    const said: string[] = [];
    const authenticator = issuerAuthenticator({
      issuer: CLOSED,
      audience: 'berth',
      log: (line) => said.push(line),
      timing: { fetchTimeoutMs: 2_000 },
    });
    const decision = authenticator.authenticate(
      presentedBy(new Request('http://berth/assign', { method: 'POST' })),
    );
    const answer = typeof decision === 'function' ? await decision() : decision;
    assert.deepEqual(answer, {
      ok: false,
      refused: noIdentityProvider(CLOSED),
      challenge: 'Bearer realm="berth"',
    });
    assert.deepEqual(said, [
      `berth api: the issuer ${CLOSED} cannot be used: ${CLOSED}/.well-known/openid-configuration cannot be fetched: the connection was refused`,
    ]);
  });
});
