/**
 * Key pairs minted by berth, and keys found on a node read back, checked against the
 * reference tool: OpenSSL reads what berth writes, and berth reads what OpenSSL writes.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint } from 'jose';
import { mintKeyPair, readFoundKey } from '../../src/keys/key-pair.ts';
import { KEY_KINDS } from '../../src/keys/kinds.ts';
import { needs } from '../helpers/needs.ts';

const openssl = (args: string[], input?: string) =>
  execFileSync('openssl', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });

const skip = needs('openssl', 'openssl');

describe('a key pair minted by berth', () => {
  for (const kind of KEY_KINDS)
    it(`${kind}: PKCS #8 that OpenSSL reads, its SPKI and JWK the same key, and its kid the JWK's thumbprint`, {
      skip,
    }, async () => {
      const minted = await mintKeyPair(kind);
      assert.match(minted.pem, /^-----BEGIN PRIVATE KEY-----\n/);
      assert.match(
        minted.publicPem,
        /^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/,
      );
      // OpenSSL derives the public key from the private one: the same as berth's.
      assert.equal(openssl(['pkey', '-pubout'], minted.pem), minted.publicPem);
      const text = openssl(['pkey', '-noout', '-text'], minted.pem);
      const expected = {
        'ec-p256': /NIST CURVE: P-256/,
        ed25519: /ED25519 Private-Key/,
        'rsa-3072': /Private-Key: \(3072 bit, 2 primes\)/,
      }[kind];
      assert.match(text, expected);
      const fromJwk = createPublicKey({ key: minted.jwk, format: 'jwk' });
      assert.equal(fromJwk.export({ type: 'spki', format: 'pem' }), minted.publicPem);
      assert.equal(minted.jwk.kid, minted.kid);
      assert.equal(minted.jwk.use, 'sig');
      assert.equal(
        minted.jwk.alg,
        { 'ec-p256': 'ES256', ed25519: 'EdDSA', 'rsa-3072': 'RS256' }[kind],
      );
      assert.equal(minted.kid, await calculateJwkThumbprint(minted.jwk, 'sha256'));
      assert.equal(minted.jwk.d, undefined, 'no private member in the public JWK');
      const again = await mintKeyPair(kind);
      assert.notEqual(again.kid, minted.kid, 'a new key is a new kid');
    });
});

describe('a key found on a node, read back', () => {
  it('a key minted by berth reads back as the same kind, public key and kid', async () => {
    for (const kind of KEY_KINDS) {
      const minted = await mintKeyPair(kind);
      const found = await readFoundKey(minted.pem);
      assert.deepEqual(found, {
        key: { kind, publicPem: minted.publicPem, jwk: minted.jwk, kid: minted.kid },
      });
    }
  });

  for (const [what, kind, args] of [
    [
      'openssl genpkey -algorithm EC (PKCS #8)',
      'ec-p256',
      ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
    ],
    [
      'openssl ecparam -genkey (SEC 1: BEGIN EC PRIVATE KEY)',
      'ec-p256',
      ['ecparam', '-genkey', '-name', 'prime256v1', '-noout'],
    ],
    ['openssl genpkey -algorithm ed25519', 'ed25519', ['genpkey', '-algorithm', 'ed25519']],
    [
      'openssl genrsa -traditional 3072 (PKCS #1: BEGIN RSA PRIVATE KEY)',
      'rsa-3072',
      ['genrsa', '-traditional', '3072'],
    ],
    ['openssl genrsa 3072 (PKCS #8)', 'rsa-3072', ['genrsa', '3072']],
  ] as const)
    it(`reads a key OpenSSL made: ${what}`, { skip }, async () => {
      const pem = openssl([...args]);
      const found = await readFoundKey(`a comment before the key\n${pem}`);
      assert.ok('key' in found, JSON.stringify(found));
      assert.equal(found.key.kind, kind);
      assert.equal(found.key.publicPem, openssl(['pkey', '-pubout'], pem));
      assert.equal(found.key.kid, await calculateJwkThumbprint(found.key.jwk, 'sha256'));
    });

  for (const [what, make, reason, words] of [
    [
      'an RSA key of 2048 bits',
      () => openssl(['genrsa', '2048']),
      'other-kind',
      'it is an RSA key of 2048 bits; berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
    [
      'an EC key on P-384',
      () => openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384']),
      'other-kind',
      'it is an EC key on P-384; berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
    [
      'an X25519 key',
      () => openssl(['genpkey', '-algorithm', 'x25519']),
      'other-kind',
      'it is not a private key berth reads; berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
    [
      'a key under a passphrase (PKCS #8)',
      () => openssl(['genpkey', '-algorithm', 'ed25519', '-aes256', '-pass', 'pass:hunter22']),
      'encrypted',
      'its private key is encrypted with a passphrase; berth keeps keys that a service reads without one',
    ],
    [
      'a key under a passphrase (traditional)',
      () => openssl(['genrsa', '-traditional', '-aes256', '-passout', 'pass:hunter22', '3072']),
      'encrypted',
      'its private key is encrypted with a passphrase; berth keeps keys that a service reads without one',
    ],
    [
      'a public key',
      () => openssl(['pkey', '-pubout'], openssl(['genpkey', '-algorithm', 'ed25519'])),
      'no-private-key',
      'it holds no PEM private key (BEGIN PRIVATE KEY, BEGIN EC PRIVATE KEY or BEGIN RSA PRIVATE KEY); berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
    [
      'a password',
      () => 'hunter22-but-longer\n',
      'no-private-key',
      'it holds no PEM private key (BEGIN PRIVATE KEY, BEGIN EC PRIVATE KEY or BEGIN RSA PRIVATE KEY); berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
    [
      'two keys in one file',
      () => openssl(['genpkey', '-algorithm', 'ed25519']).repeat(2),
      'several-keys',
      'it holds 2 private keys, where berth reads one',
    ],
    [
      'a PEM block of bytes that are no key',
      () => '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n',
      'other-kind',
      'it is not a private key berth reads; berth keeps ec-p256, ed25519 and rsa-3072 keys',
    ],
  ] as const)
    it(`refuses ${what}, in words`, { skip }, async () => {
      assert.deepEqual(await readFoundKey(make()), { refused: { reason, words } });
    });
});
