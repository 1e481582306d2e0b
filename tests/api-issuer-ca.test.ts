/**
 * `berth api` fetching its issuer over https: it trusts the state's CA (besides the
 * system's) and `--issuer-ca`, with no variable set. The issuer is real (tests/helpers/
 * issuer.ts over node:https), its certificate signed by the CA under test; berth api is
 * the real process, started as an operator starts it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateIdentity } from 'age-encryption';
import { signingCa, stateCa } from '../src/commands/state-ca.ts';
import { noIdentityProvider } from '../src/http/authenticator.ts';
import { type CertifiedKey, issueCertificate, makeCa } from '../src/keys/certificate.ts';
import { fileStores } from '../src/stores/file-store.ts';
import { ageSeal, heldKeys } from '../src/vault/seal.ts';
import { httpAsk, runApiExpectingEnd, startApi } from './helpers/api-process.ts';
import { apiWorld } from './helpers/api-world.ts';
import { freePort, type Issuer, startIssuer } from './helpers/issuer.ts';
import { makeWorld, POSTGRES, type World } from './helpers/world.ts';

/** The state's CA of `state`, made as a converge would make it, with its key opened. */
async function stateCaOf(state: string): Promise<CertifiedKey> {
  const seal = ageSeal(heldKeys(await generateIdentity()));
  const stores = fileStores({ dir: state, createIfMissing: false }, { seal });
  const { ca } = await stateCa(stores, { actor: 'test', via: 'cli' });
  return signingCa(ca);
}

/** What an https issuer on loopback serves with: a key and a certificate `ca` signed. */
async function tlsOf(ca: CertifiedKey): Promise<{ key: string; cert: string }> {
  const issued = await issueCertificate(ca, { names: ['127.0.0.1'], days: 1 });
  return { key: issued.key, cert: issued.certificate };
}

const ASSIGN = { node: 'box', module: 'postgres' };

describe('berth api and an https issuer', () => {
  let world: World;
  let dir: string;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    dir = await mkdtemp(join(tmpdir(), 'berth-issuer-ca-'));
  });
  after(async () => {
    await world.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("trusts the state's CA: an issuer whose certificate it signed is believed, no variable set", async () => {
    const served = await apiWorld({
      world,
      issuer: { tls: await tlsOf(await stateCaOf(world.state)) },
    });
    const { issuer } = served;
    try {
      assert.match(issuer.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      const answer = await served.ask('/assign', ASSIGN);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body?.said, 'box is to run postgres');
      assert.match(
        served.api.stderr(),
        new RegExp(
          `berth api: verifying tokens from ${issuer.url} with the keys at ${issuer.url}/keys\\n`,
        ),
      );
    } finally {
      await served.close();
    }
  });

  it('refuses an issuer another CA signed, saying its certificate is not trusted, until --issuer-ca names that CA', async () => {
    const other = await makeCa();
    const tls = await tlsOf(other);
    const file = join(dir, 'other-ca.pem');
    await writeFile(file, other.certificate);
    const untrusting = await apiWorld({ world, issuer: { tls } });
    try {
      const refused = await untrusting.ask('/assign', ASSIGN);
      assert.equal(refused.status, 401);
      assert.equal(refused.body?.refused, noIdentityProvider(untrusting.issuer.url));
      assert.match(
        untrusting.api.stderr(),
        /cannot be fetched: its TLS certificate is not trusted\n/,
      );
    } finally {
      await untrusting.close();
    }
    const trusting = await apiWorld({ world, issuer: { tls }, flags: ['--issuer-ca', file] });
    try {
      const answer = await trusting.ask('/assign', ASSIGN);
      assert.equal(answer.status, 200, answer.text);
    } finally {
      await trusting.close();
    }
  });

  it("trusts a state's CA made after berth api began, from its next try, without a restart", async () => {
    const fresh = await makeWorld({ postgres: POSTGRES });
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    // The issuer's certificate needs the CA this test makes later: no API world, whose
    // issuer is up (or down) with its certificate from the start.
    const api = await startApi([
      '--listen',
      '127.0.0.1:0',
      '--issuer',
      url,
      '--state',
      fresh.state,
    ]);
    let issuer: Issuer | undefined;
    try {
      // No identity provider yet, and no CA: the seed's 401.
      const before = await httpAsk(api.url, { path: '/assign', body: '{}' });
      assert.equal(before.body?.refused, noIdentityProvider(url));
      // Then a converge makes the state's CA and brings the issuer up with its certificate.
      issuer = await startIssuer({ port, tls: await tlsOf(await stateCaOf(fresh.state)) });
      const token = await issuer.token();
      const assign = () =>
        httpAsk(api.url, {
          path: '/assign',
          body: JSON.stringify(ASSIGN),
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        });
      let answer = await assign();
      for (let waited = 0; answer.status === 401 && waited < 12_000; waited += 250) {
        await sleep(250);
        answer = await assign();
      }
      assert.equal(answer.status, 200, `${answer.text}\n${api.stderr()}`);
    } finally {
      await api.stop();
      await issuer?.close();
      await fresh.cleanup();
    }
  });

  for (const [what, content, words] of [
    [
      'no such file',
      undefined,
      (file: string) => `--issuer-ca ${file} cannot be read: there is no such file`,
    ],
    [
      'a file of no PEM',
      'not a certificate\n',
      (file: string) =>
        `--issuer-ca ${file} holds no PEM certificate (BEGIN CERTIFICATE): it takes the certificate of the CA that signed the issuer's`,
    ],
    [
      'a private key',
      '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIPe1\n-----END PRIVATE KEY-----\n',
      (file: string) =>
        `--issuer-ca ${file} holds a PRIVATE KEY: it takes CA certificates alone (PEM, BEGIN CERTIFICATE)`,
    ],
    [
      'a PEM block that is no certificate',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      (file: string) => `--issuer-ca ${file} is not an X.509 certificate`,
    ],
  ] as const)
    it(`will not start with --issuer-ca naming ${what}, and says why`, async () => {
      const file = join(dir, `${what.replaceAll(' ', '-')}.pem`);
      if (content !== undefined) await writeFile(file, content);
      const ended = await runApiExpectingEnd([
        '--listen',
        '127.0.0.1:0',
        '--issuer',
        'https://id.example.org',
        '--issuer-ca',
        file,
        '--state',
        world.state,
      ]);
      assert.equal(ended.code, 2);
      assert.equal(ended.stdout, '');
      assert.match(
        ended.stderr,
        new RegExp(`^${words(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`),
      );
    });
});
