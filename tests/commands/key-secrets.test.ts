/**
 * Secrets that are keys, through the real binary on a rooted node: each kind minted into
 * the vault, sealed, and written as PEM that OpenSSL reads back; a `tls` secret's
 * certificate from the state's CA for the names the node renders; templates placing a
 * key's public half, its JWK, a certificate and the CA; a private key masked wherever a
 * preview or a hook's output goes, its public half and certificate shown; a hand-made key
 * taken, and a file that is no key of its kind refused with its code.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  X509Certificate,
} from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { needs } from '../helpers/needs.ts';
import { makeWorld, type Run, type World } from '../helpers/world.ts';
import { stateFiles } from './support.ts';

const skip = needs('openssl', 'openssl');

/** Every kind of key, its templates, and a setup that prints the key (to be masked). */
const IDP = {
  description: 'an identity provider',
  values: {
    port: { type: 'integer', default: 4593 },
    name: { type: 'string', default: 'idp.example.test' },
  },
  secrets: {
    signing: { kind: 'ec-p256', path: '/etc/idp/signing.key' },
    edge: { kind: 'ed25519', path: '/etc/idp/edge.key' },
    legacy: { kind: 'rsa-3072', path: '/etc/idp/legacy.key', owner: 0, mode: '0400' },
    tls: {
      kind: 'tls',
      path: '/etc/idp/tls.key',
      cert: '/etc/idp/tls.pem',
      names: ['{{value name}}', '127.0.0.1'],
      days: 30,
    },
    client: { path: '/etc/idp/client.secret' },
  },
  files: {
    '/etc/idp/jwks.json': { content: '{"keys":[{{jwk signing}}]}\n' },
    '/etc/idp/signing.pub': { content: '{{public signing}}' },
    '/etc/idp/chain.pem': { content: '{{cert tls}}{{ca}}' },
    '/etc/idp/bundle.pem': { content: '{{secret tls}}' },
  },
  setup: 'head -3 "$BERTH_ROOT/etc/idp/signing.key"; echo "setup on $BERTH_FACT_FQDN"',
};

/** openssl, on a file of the node. */
function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8' });
}

/** A public key's RFC 7638 thumbprint: the kid berth gives it. */
async function kidOf(publicPem: string): Promise<string> {
  const jwk = createPublicKey(publicPem).export({ format: 'jwk' }) as JWK;
  return calculateJwkThumbprint(jwk, 'sha256');
}

/** The base64 lines of a PEM block: what must never be shown of a private key. */
function bodyLines(pem: string): string[] {
  return pem.split('\n').filter((line) => line.length > 16 && !line.startsWith('-----'));
}

describe('key secrets on a rooted node', () => {
  let world: World;
  const at = (path: string) => join(world.root, path);
  const converge = async (...args: string[]): Promise<Run> => {
    const preview = await world.berth('converge', 'box', ...args);
    assert.equal(preview.code, 0, preview.stderr);
    const act = await world.actOn(preview, 'converge', 'box', ...args);
    assert.equal(act.code, 0, `${act.stdout}\n${act.stderr}`);
    return act;
  };

  before(async () => {
    world = await makeWorld({ idp: IDP });
    await world.onBox('etc/hostname', 'idp\n');
    await world.onBox('etc/hosts', '127.0.1.1 idp.example.test idp\n');
    assert.equal((await world.berth('assign', 'box', 'idp')).code, 0);
  });
  after(() => world?.cleanup());

  it('mints each kind into the vault, sealed, and writes each as a PEM key OpenSSL reads', {
    skip,
  }, async () => {
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /mint signing \(a new ec-p256 key\) into the vault and write it to \/etc\/idp\/signing\.key\n/,
    );
    assert.match(preview.stdout, /mint legacy \(a new rsa-3072 key\) into the vault/);
    assert.match(
      preview.stdout,
      /mint tls \(a new key and its certificate from the state's CA for idp\.example\.test and 127\.0\.0\.1, for 30 days\) into the vault and write it to \/etc\/idp\/tls\.key, and its certificate to \/etc\/idp\/tls\.pem\n/,
    );
    const act = await world.actOn(preview, 'converge', 'box');
    assert.equal(act.code, 0, act.stderr);

    assert.match(
      openssl('pkey', '-in', at('etc/idp/signing.key'), '-noout', '-text'),
      /ASN1 OID: prime256v1/,
    );
    assert.match(
      openssl('pkey', '-in', at('etc/idp/edge.key'), '-noout', '-text'),
      /ED25519 Private-Key/,
    );
    assert.match(
      openssl('pkey', '-in', at('etc/idp/legacy.key'), '-noout', '-text'),
      /Private-Key: \(3072 bit/,
    );
    for (const key of ['signing.key', 'edge.key', 'tls.key'])
      assert.equal(((await stat(at(`etc/idp/${key}`))).mode & 0o777).toString(8), '600', key);
    assert.equal(((await stat(at('etc/idp/legacy.key'))).mode & 0o777).toString(8), '400');
    assert.equal(((await stat(at('etc/idp/tls.pem'))).mode & 0o777).toString(8), '644');

    // The certificate: for the names the node renders, signed by the state's CA, for the key beside it.
    const ca = await world.berth('ca');
    assert.equal(ca.code, 0, ca.stderr);
    await writeFile(join(world.dir, 'ca.pem'), ca.stdout);
    const certificate = new X509Certificate(await readFile(at('etc/idp/tls.pem')));
    assert.equal(certificate.subjectAltName, 'DNS:idp.example.test, IP Address:127.0.0.1');
    assert.equal(
      openssl('verify', '-CAfile', join(world.dir, 'ca.pem'), at('etc/idp/tls.pem')).trim(),
      `${at('etc/idp/tls.pem')}: OK`,
    );
    assert.ok(certificate.checkPrivateKey(createPrivateKey(await readFile(at('etc/idp/tls.key')))));
    const days = (Date.parse(certificate.validTo) - Date.now()) / 86_400_000;
    assert.ok(days > 29 && days <= 30, `${days} days`);

    // Sealed: no key's text anywhere in the state directory (the journal keeps the setup's
    // output, its key lines masked).
    const key = await readFile(at('etc/idp/signing.key'), 'utf8');
    const files = Object.entries(await stateFiles(world));
    for (const name of ['signing.key', 'edge.key', 'legacy.key', 'tls.key']) {
      const text = await readFile(at(`etc/idp/${name}`), 'utf8');
      for (const [path, kept] of files)
        for (const line of bodyLines(text)) assert.ok(!kept.includes(line), `${name} in ${path}`);
    }
    assert.ok(files.length > 3);
    // berth secret gives the PEM back, as the node holds it.
    const kept = await world.berth('secret', 'box', 'idp', 'signing');
    assert.equal(kept.stdout, key);
  });

  it("renders a key's public half, its JWK with its kid, the certificate and the CA", {
    skip,
  }, async () => {
    const key = await readFile(at('etc/idp/signing.key'), 'utf8');
    const publicPem = openssl('pkey', '-in', at('etc/idp/signing.key'), '-pubout');
    assert.equal(await readFile(at('etc/idp/signing.pub'), 'utf8'), publicPem);
    const jwks = JSON.parse(await readFile(at('etc/idp/jwks.json'), 'utf8')) as { keys: JWK[] };
    const [jwk] = jwks.keys;
    assert.deepEqual(Object.keys(jwk ?? {}).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
    assert.equal(jwk?.alg, 'ES256');
    assert.equal(jwk?.use, 'sig');
    assert.equal(jwk?.kid, await kidOf(publicPem));
    assert.deepEqual(
      { x: jwk?.x, y: jwk?.y },
      (({ x, y }) => ({ x, y }))(createPublicKey(key).export({ format: 'jwk' })),
    );
    const chain = await readFile(at('etc/idp/chain.pem'), 'utf8');
    assert.equal(
      chain,
      (await readFile(at('etc/idp/tls.pem'), 'utf8')) +
        (await readFile(join(world.dir, 'ca.pem'), 'utf8')),
    );
    // {{secret tls}} is the tls secret's key alone, never its certificate.
    assert.equal(
      await readFile(at('etc/idp/bundle.pem'), 'utf8'),
      await readFile(at('etc/idp/tls.key'), 'utf8'),
    );
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /box is as assigned: nothing to do/);
  });

  it('masks a private key in said, --json, the journal and a plan file; shows a public key and a certificate', {
    skip,
  }, async () => {
    const key = await readFile(at('etc/idp/signing.key'), 'utf8');
    const tlsKey = await readFile(at('etc/idp/tls.key'), 'utf8');
    const setupSaid = (await readdir(join(world.state, 'nodes', 'box'))).includes('journal.jsonl')
      ? await readFile(join(world.state, 'nodes', 'box', 'journal.jsonl'), 'utf8')
      : '';
    assert.match(setupSaid, /\[secret signing of idp\]/);
    assert.match(setupSaid, /setup on idp\.example\.test/);
    // Each file differs by hand, so that the preview diffs the key, its public half and the chain.
    await writeFile(at('etc/idp/bundle.pem'), `# by hand\n${tlsKey}`);
    await writeFile(at('etc/idp/signing.pub'), '# by hand\n');
    await writeFile(at('etc/idp/chain.pem'), '# by hand\n');
    const words = await world.berth('converge', 'box', '--full-diff');
    const json = await world.berth('converge', 'box', '--json', '--full-diff');
    const plan = join(world.dir, 'idp.plan');
    assert.equal((await world.berth('converge', 'box', '--out', plan)).code, 0);
    const shown = { words: words.stdout, json: json.stdout, plan: await readFile(plan, 'utf8') };
    for (const [where, text] of Object.entries(shown)) {
      for (const line of [...bodyLines(key), ...bodyLines(tlsKey)])
        assert.ok(!text.includes(line), `${where} shows a line of a private key`);
      assert.doesNotMatch(text, /BEGIN PRIVATE KEY/, where);
    }
    assert.match(words.stdout, /\[secret tls of idp\]|\[secret tls\]/);
    // A public key and a certificate are shown as they are.
    const publicPem = openssl('pkey', '-in', at('etc/idp/signing.key'), '-pubout');
    for (const line of bodyLines(publicPem)) assert.ok(words.stdout.includes(`+${line}`), line);
    const certificate = await readFile(at('etc/idp/tls.pem'), 'utf8');
    for (const line of bodyLines(certificate)) assert.ok(words.stdout.includes(`+${line}`), line);
    await converge();
  });

  it('takes a hand-made key and certificate into the vault, and changes nothing on the node', {
    skip,
  }, async () => {
    const taker = await makeWorld({ idp: IDP });
    try {
      await taker.onBox('etc/hostname', 'idp\n');
      await taker.onBox('etc/hosts', '127.0.1.1 idp.example.test idp\n');
      // What an operator made by hand with openssl: traditional EC key, a CA of their own.
      const dir = taker.dir;
      const key = (name: string, ...how: string[]) => {
        openssl('genpkey', ...how, '-out', join(dir, name));
        return join(dir, name);
      };
      const caKey = key('ca.key', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256');
      openssl(
        'req',
        '-x509',
        '-new',
        '-key',
        caKey,
        '-days',
        '3650',
        '-subj',
        '/CN=hand CA',
        '-out',
        join(dir, 'hand-ca.pem'),
      );
      const tlsKey = key('tls.key', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256');
      openssl(
        'req',
        '-new',
        '-key',
        tlsKey,
        '-subj',
        '/CN=idp.example.test',
        '-out',
        join(dir, 'tls.csr'),
      );
      await writeFile(join(dir, 'ext'), 'subjectAltName=DNS:idp.example.test,IP:127.0.0.1\n');
      openssl(
        'x509',
        '-req',
        '-in',
        join(dir, 'tls.csr'),
        '-CA',
        join(dir, 'hand-ca.pem'),
        '-CAkey',
        caKey,
        '-CAcreateserial',
        '-days',
        '400',
        '-extfile',
        join(dir, 'ext'),
        '-out',
        join(dir, 'tls.pem'),
      );
      const signing = openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout');
      assert.match(signing, /BEGIN EC PRIVATE KEY/);
      const placed = {
        'etc/idp/signing.key': signing,
        'etc/idp/edge.key': openssl('genpkey', '-algorithm', 'ED25519'),
        'etc/idp/legacy.key': openssl(
          'genpkey',
          '-algorithm',
          'RSA',
          '-pkeyopt',
          'rsa_keygen_bits:3072',
        ),
        'etc/idp/tls.key': await readFile(tlsKey, 'utf8'),
        'etc/idp/tls.pem': await readFile(join(dir, 'tls.pem'), 'utf8'),
        'etc/idp/client.secret': 'by-hand-client-secret\n',
      };
      for (const [path, text] of Object.entries(placed)) await taker.onBox(path, text);
      assert.equal((await taker.berth('adopt', 'box')).code, 0);
      const preview = await taker.berth('take', 'box', 'idp');
      assert.equal(preview.code, 0, preview.stderr);
      const kid = await kidOf(
        createPublicKey(signing).export({ format: 'pem', type: 'spki' }) as string,
      );
      assert.match(
        preview.stdout,
        new RegExp(
          `secret signing: found on box at /etc/idp/signing\\.key: an ec-p256 key, kid ${kid}\\n`,
        ),
      );
      assert.match(
        preview.stdout,
        /secret tls: found on box at \/etc\/idp\/tls\.key: an ec-p256 key, kid \S+, with its certificate found at \/etc\/idp\/tls\.pem\n/,
      );
      const before = await Promise.all(
        Object.keys(placed).map((path) => readFile(join(taker.root, path), 'utf8')),
      );
      const act = await taker.actOn(preview, 'take', 'box', 'idp');
      assert.equal(act.code, 0, act.stderr);
      assert.match(
        act.stdout,
        /secret tls: read into the vault from \/etc\/idp\/tls\.key, with its certificate from \/etc\/idp\/tls\.pem/,
      );
      const after = await Promise.all(
        Object.keys(placed).map((path) => readFile(join(taker.root, path), 'utf8')),
      );
      assert.deepEqual(after, before, 'a take writes no key');
      assert.equal((await taker.berth('secret', 'box', 'idp', 'signing')).stdout, signing);
      assert.equal(
        (await taker.berth('secret', 'box', 'idp', 'tls')).stdout,
        placed['etc/idp/tls.key'] + placed['etc/idp/tls.pem'],
      );
      // The next converge writes the module's files from the keys found, and keeps the keys
      // (the one whose mode the definition names is given it).
      const next = await taker.berth('converge', 'box');
      assert.doesNotMatch(next.stdout, /^ {2}(mint|renew|rotate|restore|read) /m);
      assert.doesNotMatch(next.stdout, /write \/etc\/idp\/(signing\.key|tls\.)/);
      assert.match(
        next.stdout,
        /rewrite legacy from the vault to \/etc\/idp\/legacy\.key \(mode 0400\): its mode is 0644, not 0400\n/,
      );
      const done = await taker.actOn(next, 'converge', 'box');
      assert.equal(done.code, 0, done.stderr);
      const jwks = JSON.parse(await readFile(join(taker.root, 'etc/idp/jwks.json'), 'utf8'));
      assert.equal(jwks.keys[0].kid, kid);
      for (const path of [
        'etc/idp/signing.key',
        'etc/idp/legacy.key',
        'etc/idp/tls.key',
        'etc/idp/tls.pem',
      ])
        assert.equal(
          await readFile(join(taker.root, path), 'utf8'),
          placed[path as keyof typeof placed],
          path,
        );
    } finally {
      await taker.cleanup();
    }
  });

  it('refuses to take a file that is no key of its kind, or a tls key with no certificate for it', {
    skip,
  }, async () => {
    const taker = await makeWorld({ idp: IDP });
    try {
      await taker.onBox('etc/hostname', 'idp\n');
      const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
        format: 'pem',
        type: 'pkcs8',
      }) as string;
      const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const ecPem = ec.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
      await taker.onBox('etc/idp/signing.key', rsa2048);
      await taker.onBox('etc/idp/tls.key', ecPem);
      assert.equal((await taker.berth('adopt', 'box')).code, 0);
      const preview = await taker.berth('take', 'box', 'idp', '--json');
      const body = JSON.parse(preview.stdout);
      const blockers = body.nodes.box.blockers as { code: string; words: string; path?: string }[];
      const notKey = blockers.find((item) => item.code === 'not_a_key');
      assert.equal(notKey?.path, '/etc/idp/signing.key');
      assert.match(
        notKey?.words ?? '',
        /\/etc\/idp\/signing\.key on box is not an ec-p256 key.*it is an RSA key of 2048 bits/,
      );
      const noCertificate = blockers.find((item) => item.code === 'certificate_refused');
      assert.equal(noCertificate?.path, '/etc/idp/tls.key');
      assert.match(noCertificate?.words ?? '', /it has no certificate/);
      const act = await taker.berth('take', 'box', 'idp', '--yes', '--digest', body.digest);
      assert.equal(act.code, 1);
      assert.match(act.stderr, /is not an ec-p256 key/);
      assert.equal((await taker.berth('secret', 'box', 'idp', 'signing')).code, 1, 'nothing kept');
    } finally {
      await taker.cleanup();
    }
  });

  it('refuses a definition whose kind is mistyped, or whose template reads a key a secret is not', async () => {
    const checked = await makeWorld({
      a: { secrets: { k: { kind: 'ec-256', path: '/etc/a/k' } } },
      b: { secrets: { k: { kind: 'tls', path: '/etc/b/k' } } },
      c: {
        secrets: { k: { path: '/etc/c/k' } },
        files: { '/etc/c/pub': { content: '{{jwk k}}' } },
      },
      d: {
        secrets: { k: { kind: 'ec-p256', path: '/etc/d/k' } },
        files: { '/etc/d/c': { content: '{{cert k}}' } },
      },
      e: { secrets: { k: { kind: 'ed25519', path: '/etc/e/k', bytes: 32 } } },
      f: {
        secrets: {
          k: { kind: 'tls', path: '/etc/f/k', cert: '/etc/f/c', names: ['{{secret k}}'] },
        },
      },
      g: {
        secrets: { k: { kind: 'tls', path: '/etc/g/k', cert: '/etc/g/c', names: ['not a name'] } },
      },
    });
    try {
      const said =
        (await checked.berth('validate')).stdout + (await checked.berth('validate')).stderr;
      assert.match(
        said,
        /a\.json: secrets\.k\.kind: "ec-256" is not a kind of secret berth keeps: a secret's kind is random, ec-p256, ed25519, rsa-3072, tls; did you mean ec-p256\?/,
      );
      assert.match(said, /b\.json: secrets\.k: a tls secret names its cert/);
      assert.match(said, /c\.json: \/etc\/c\/pub reads \{\{jwk k\}\}, but k is a random secret/);
      assert.match(
        said,
        /d\.json: \/etc\/d\/c reads \{\{cert k\}\}, but k is an ec-p256 key: a certificate is a tls secret's/,
      );
      assert.match(
        said,
        /e\.json: secrets\.k: bytes is how much randomness a random secret has; an ed25519 key is of its own size/,
      );
      assert.match(said, /f\.json: secrets\.k\.names reads values and facts alone/);
      assert.match(said, /g\.json: secrets\.k\.names\.0: "not a name" is neither a DNS name/);
    } finally {
      await checked.cleanup();
    }
  });
});
