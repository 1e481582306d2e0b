/**
 * The state's CA and the certificates it signs, checked by the reference tool and by a
 * real TLS handshake: OpenSSL verifies the chain and reads the names, Node's TLS client
 * trusts a server whose certificate the CA signed, and berth reads what OpenSSL writes.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, createServer } from 'node:tls';
import {
  type CertifiedKey,
  issueCertificate,
  issuedBy,
  makeCa,
  readCertificate,
  renewalDue,
} from '../../src/keys/certificate.ts';
import { readFoundKey } from '../../src/keys/key-pair.ts';
import { mintKeySecret } from '../../src/keys/mint.ts';
import { needs } from '../helpers/needs.ts';

const skip = needs('openssl', 'openssl');
const DAY = 86_400_000;

describe('the state CA and the certificates it signs', () => {
  let dir: string;
  let ca: CertifiedKey;
  const file = async (name: string, text: string) => {
    await writeFile(join(dir, name), text);
    return join(dir, name);
  };
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-certs-'));
    ca = await makeCa();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('the CA is a CA for certificates alone, signed by itself, for ten years', {
    skip,
  }, async () => {
    const text = openssl('x509', '-noout', '-text', '-in', await file('ca.pem', ca.certificate));
    assert.match(text, /X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
    assert.match(text, /X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
    assert.match(text, /Subject: CN = berth CA [0-9a-f]{8}\n/);
    const read = readCertificate(ca.certificate);
    assert.ok(!('refused' in read));
    assert.equal(read.issuer, read.subject);
    const years = (read.notAfter.getTime() - Date.now()) / (365 * DAY);
    assert.ok(years > 9.9 && years < 10.1, `${years} years`);
    assert.equal(
      openssl('verify', '-CAfile', join(dir, 'ca.pem'), join(dir, 'ca.pem')).trim(),
      `${join(dir, 'ca.pem')}: OK`,
    );
    const found = await readFoundKey(ca.key);
    assert.ok('key' in found && found.key.kind === 'ec-p256');
    assert.equal(found.key.publicPem, read.publicPem, 'the key is the certificate’s');
    const other = await makeCa();
    assert.notEqual(
      (readCertificate(other.certificate) as { subject: string }).subject,
      read.subject,
      'another state’s CA has another name',
    );
  });

  it('a tls secret: a key and a certificate the CA signed, for its names, that OpenSSL verifies', {
    skip,
  }, async () => {
    const minted = await mintKeySecret('tls', {
      ca,
      names: ['idp1.example.org', '127.0.0.1', '::1'],
      days: 90,
    });
    assert.ok(minted.certificate);
    const leaf = await file('leaf.pem', minted.certificate);
    assert.equal(openssl('verify', '-CAfile', join(dir, 'ca.pem'), leaf).trim(), `${leaf}: OK`);
    const text = openssl('x509', '-noout', '-text', '-in', leaf);
    assert.match(
      text,
      /DNS:idp1\.example\.org, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1\n/,
    );
    assert.match(text, /TLS Web Server Authentication/);
    assert.match(text, /CA:FALSE/);
    assert.match(text, /Subject: CN = idp1\.example\.org\n/);
    const read = readCertificate(minted.certificate);
    assert.ok(!('refused' in read));
    assert.deepEqual(read.names, ['idp1.example.org', '127.0.0.1', '::1']);
    assert.equal(read.issuer, (readCertificate(ca.certificate) as { subject: string }).subject);
    assert.equal(read.publicPem, minted.publicPem, 'the certificate is for the key minted');
    const days = (read.notAfter.getTime() - Date.now()) / DAY;
    assert.ok(days > 89.9 && days < 90.1, `${days} days`);
    assert.equal(await issuedBy(minted.certificate, ca.certificate), true);
    assert.equal(await issuedBy(minted.certificate, (await makeCa()).certificate), false);
    assert.equal(
      openssl('pkey', '-pubout', '-in', await file('leaf.key', minted.pem)),
      minted.publicPem,
    );
  });

  it('a TLS client that trusts the CA accepts a server with its certificate; one that does not, refuses it', async () => {
    const issued = await issueCertificate(ca, { names: ['localhost', '127.0.0.1'], days: 1 });
    const server = createServer({ key: issued.key, cert: issued.certificate }, (socket) =>
      socket.end('hello'),
    );
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    const { port } = server.address() as AddressInfo;
    const hello = (options: { ca?: string[]; servername?: string }) =>
      new Promise<string>((answered, failed) => {
        const socket = connect({ host: '127.0.0.1', port, ...options }, () => {
          let text = '';
          socket.on('data', (chunk) => {
            text += chunk;
          });
          socket.on('end', () => answered(text));
        });
        socket.on('error', failed);
      });
    try {
      assert.equal(await hello({ ca: [ca.certificate] }), 'hello');
      assert.equal(await hello({ ca: [ca.certificate], servername: 'localhost' }), 'hello');
      await assert.rejects(hello({}), /unable to verify the first certificate/);
      await assert.rejects(
        hello({ ca: [ca.certificate], servername: 'elsewhere.example.org' }),
        /altnames/,
      );
    } finally {
      server.close();
    }
  });

  it('reads a certificate OpenSSL made: its names, its not-after and its issuer', {
    skip,
  }, async () => {
    const key = await file(
      'own.key',
      openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'),
    );
    const pem = openssl(
      'req',
      '-x509',
      '-key',
      key,
      '-days',
      '30',
      '-subj',
      '/O=Example/CN=git.example.org',
      '-addext',
      'subjectAltName=DNS:git.example.org,IP:192.0.2.7,IP:2001:db8::7',
    );
    const read = readCertificate(`Bag Attributes: text before it\n${pem}`);
    assert.ok(!('refused' in read), JSON.stringify(read));
    assert.deepEqual(read.names, ['git.example.org', '192.0.2.7', '2001:db8::7']);
    assert.equal(read.issuer, 'O=Example, CN=git.example.org');
    const enddate = openssl('x509', '-noout', '-enddate', '-in', await file('own.pem', pem)).trim();
    assert.equal(read.notAfter.getTime(), Date.parse(enddate.replace('notAfter=', '')));
    assert.equal(renewalDue(read), false, 'a new certificate is not due');
  });

  it('is due for renewal in the last third of its life, and not before', async () => {
    const now = new Date('2027-01-01T00:00:00Z');
    const issued = await issueCertificate(ca, { names: ['web1.example.org'], days: 90, now });
    const read = readCertificate(issued.certificate);
    assert.ok(!('refused' in read));
    const at = (days: number) => new Date(now.getTime() + days * DAY);
    assert.equal(renewalDue(read, at(0)), false);
    assert.equal(renewalDue(read, at(59.9)), false);
    assert.equal(renewalDue(read, at(60.1)), true);
    assert.equal(renewalDue(read, at(120)), true, 'past its end');
  });

  for (const [names, words] of [
    [[], 'a certificate needs at least one name'],
    [
      ['web 1'],
      '"web 1" is neither a DNS name (labels of letters, digits and -, joined by dots) nor an IP address',
    ],
    [['256.1.1.1'], '"256.1.1.1" is not an IPv4 address (four numbers of 0 to 255)'],
    [['fe80::1%eth0'], '"fe80::1%eth0" is not an IPv6 address'],
    [
      ['-web.example.org'],
      '"-web.example.org" is neither a DNS name (labels of letters, digits and -, joined by dots) nor an IP address',
    ],
  ] as const)
    it(`refuses names ${JSON.stringify(names)} in words`, async () => {
      await assert.rejects(issueCertificate(ca, { names, days: 90 }), {
        name: 'TypeError',
        message: words,
      });
    });

  it('refuses what is no certificate, in words', () => {
    for (const text of [
      '',
      'hunter22',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      ca.key,
    ])
      assert.deepEqual(readCertificate(text), {
        refused: 'it holds no PEM certificate (BEGIN CERTIFICATE) that berth can read',
      });
  });
});
