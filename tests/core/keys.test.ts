/**
 * Keys and certificates on every runtime: minted, read back and signed by Web Crypto
 * alone (jose, PKI.js), the same on Node and Deno. Run by npm test and npm run test:deno.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issuedBy, makeCa, readCertificate, renewalDue } from '../../src/keys/certificate.ts';
import { readFoundKey } from '../../src/keys/key-pair.ts';
import { KEY_KINDS } from '../../src/keys/kinds.ts';
import { mintKeySecret } from '../../src/keys/mint.ts';

describe('keys and certificates, on every runtime', () => {
  it('mints each kind, and reads it back as the same kind, public key and kid', async () => {
    for (const kind of KEY_KINDS) {
      const minted = await mintKeySecret(kind);
      assert.match(
        minted.pem,
        /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/,
      );
      assert.match(minted.publicPem, /^-----BEGIN PUBLIC KEY-----\n/);
      assert.equal(minted.jwk.kid, minted.kid);
      assert.match(minted.kid, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(await readFoundKey(minted.pem), {
        key: { kind, publicPem: minted.publicPem, jwk: minted.jwk, kid: minted.kid },
      });
    }
  });

  it("mints a tls secret signed by the state's CA, for its names, due for renewal in its last third", async () => {
    const ca = await makeCa();
    const now = new Date('2027-03-01T12:00:00Z');
    const minted = await mintKeySecret('tls', {
      ca,
      names: ['idp1.example.org', '10.0.0.7'],
      days: 30,
      now,
    });
    const read = readCertificate(minted.certificate ?? '');
    assert.ok(!('refused' in read));
    assert.deepEqual(read.names, ['idp1.example.org', '10.0.0.7']);
    assert.equal(read.publicPem, minted.publicPem);
    assert.equal(read.notAfter.toISOString(), '2027-03-31T12:00:00.000Z');
    assert.equal(await issuedBy(minted.certificate ?? '', ca.certificate), true);
    assert.equal(renewalDue(read, new Date('2027-03-20T00:00:00Z')), false);
    assert.equal(renewalDue(read, new Date('2027-03-22T00:00:00Z')), true);
  });
});
