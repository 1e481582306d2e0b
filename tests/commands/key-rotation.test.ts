/**
 * Rotating a key asked by name, through the real binary on a rooted node: the preview
 * mints the new key into the vault, sealed, as rotating, and names its kid; a preview
 * again names the same one; the act with that preview's digest places exactly that key,
 * and its files and setup follow; an edited digest is refused and places nothing; no kept
 * preview or plan file holds the key. And a `tls` secret's certificate renewed in the last
 * third of its life, the clock given (in process, through the one runner both faces use).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { fileDeps } from '../../src/cli/deps.ts';
import { openAct } from '../../src/commands/act.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { answerOf } from '../../src/words/answer.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { needs } from '../helpers/needs.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { stateFiles } from './support.ts';

const skip = needs('openssl', 'openssl');

const IDP = {
  description: 'an identity provider',
  secrets: {
    signing: { kind: 'ec-p256', path: '/etc/idp/signing.key' },
    tls: {
      kind: 'tls',
      path: '/etc/idp/tls.key',
      cert: '/etc/idp/tls.pem',
      names: ['{{value host}}'],
      days: 90,
    },
    client: { path: '/etc/idp/client.secret' },
  },
  values: { host: { type: 'string', default: 'idp.example.test' } },
  files: { '/etc/idp/jwks.json': { content: '{"keys":[{{jwk signing}}]}\n' } },
  setup: 'echo setup >> "$BERTH_ROOT/setups"',
  start: 'true',
  reload: 'echo reload >> "$BERTH_ROOT/setups"',
};

/** The kid of the key in a PEM file: its public JWK's RFC 7638 thumbprint. */
async function kidOfFile(path: string): Promise<string> {
  const jwk = createPublicKey(await readFile(path)).export({ format: 'jwk' }) as JWK;
  return calculateJwkThumbprint(jwk, 'sha256');
}

/** The base64 lines of a PEM block. */
function bodyLines(pem: string): string[] {
  return pem.split('\n').filter((line) => line.length > 16 && !line.startsWith('-----'));
}

describe('rotating a key by name', () => {
  let world: World;
  const at = (path: string) => join(world.root, path);

  before(async () => {
    world = await makeWorld({ idp: IDP });
    assert.equal((await world.berth('assign', 'box', 'idp')).code, 0);
    const preview = await world.berth('converge', 'box');
    const act = await world.actOn(preview, 'converge', 'box');
    assert.equal(act.code, 0, act.stderr);
  });
  after(() => world?.cleanup());

  it('previews the new kid, names it again, and places exactly that key on the act', async () => {
    const was = await kidOfFile(at('etc/idp/signing.key'));
    const preview = await world.berth('converge', 'box', '--rotate', 'signing');
    assert.equal(preview.code, 0, preview.stderr);
    const named = new RegExp(
      `rotate signing: a new ec-p256 key, kid (\\S+), in place of kid ${was}; kept rotating in the vault since this preview, the act writes it to /etc/idp/signing\\.key\\n`,
    ).exec(preview.stdout);
    assert.ok(named, preview.stdout);
    const kid = named[1] as string;
    assert.notEqual(kid, was);
    // The files that read it, and the setup, follow it.
    assert.match(preview.stdout, /write \/etc\/idp\/jwks\.json \(mode 0644\): it differs/);
    assert.match(preview.stdout, /run setup: echo setup/);
    // A preview again names the same key; --json gives its kid beside the step.
    const json = await world.berth('converge', 'box', '--rotate', 'signing', '--json');
    const body = JSON.parse(json.stdout);
    const step = body.nodes.box.steps.find((item: { kind: string }) => item.kind === 'rotate');
    assert.deepEqual(step, {
      kind: 'rotate',
      module: 'idp',
      path: '/etc/idp/signing.key',
      secret: 'signing',
      kid,
    });
    assert.equal(body.digest, digestOf(preview.stdout));
    // Nothing placed yet, and no kept preview or plan file holds the new key.
    assert.equal(await kidOfFile(at('etc/idp/signing.key')), was);
    const plan = join(world.dir, 'rotate.plan');
    assert.equal(
      (await world.berth('converge', 'box', '--rotate', 'signing', '--out', plan)).code,
      0,
    );
    const rotating = (await world.berth('secret', 'box', 'idp', 'signing')).stdout;
    const vault = JSON.parse(await readFile(join(world.state, 'nodes/box/vault.json'), 'utf8'));
    assert.ok(Object.hasOwn(vault.secrets, 'idp/signing (rotating)'), 'kept rotating, sealed');
    assert.match(
      vault.secrets['idp/signing (rotating)'].value,
      /^-----BEGIN AGE ENCRYPTED FILE-----/,
    );

    const act = await world.actOn(preview, 'converge', 'box', '--rotate', 'signing');
    assert.equal(act.code, 0, act.stderr);
    assert.match(
      act.stdout,
      new RegExp(
        `rotated signing of idp: wrote the key of kid ${kid} to /etc/idp/signing\\.key\\n`,
      ),
    );
    assert.equal(await kidOfFile(at('etc/idp/signing.key')), kid);
    const jwks = JSON.parse(await readFile(at('etc/idp/jwks.json'), 'utf8'));
    assert.equal(jwks.keys[0].kid, kid);
    assert.equal(await readFile(at('setups'), 'utf8'), 'setup\nsetup\nreload\n');
    // The key placed is the vault's own now; none is left rotating.
    const placed = await readFile(at('etc/idp/signing.key'), 'utf8');
    assert.equal((await world.berth('secret', 'box', 'idp', 'signing')).stdout, placed);
    assert.notEqual(rotating, placed);
    const after = JSON.parse(await readFile(join(world.state, 'nodes/box/vault.json'), 'utf8'));
    assert.ok(!Object.hasOwn(after.secrets, 'idp/signing (rotating)'));
    for (const [path, text] of Object.entries(await stateFiles(world)))
      for (const line of bodyLines(placed)) assert.ok(!text.includes(line), path);
    for (const line of bodyLines(placed))
      assert.ok(!(await readFile(plan, 'utf8')).includes(line), 'the plan file');
    assert.match((await world.berth('converge', 'box')).stdout, /nothing to do/);
  });

  it('refuses an edited digest, placing nothing, and says what a stale one changed', async () => {
    const was = await readFile(at('etc/idp/signing.key'), 'utf8');
    const preview = await world.berth('converge', 'box', '--rotate', 'signing');
    const digest = digestOf(preview.stdout);
    const edited = `${digest.slice(0, -1)}${digest.endsWith('0') ? '1' : '0'}`;
    const act = await world.berth(
      'converge',
      'box',
      '--rotate',
      'signing',
      '--yes',
      '--digest',
      edited,
      '--json',
    );
    assert.equal(act.code, 1);
    assert.equal(JSON.parse(act.stdout).code, 'digest_stale');
    assert.equal(await readFile(at('etc/idp/signing.key'), 'utf8'), was);
    // The same digest acted on without --rotate is no act of that preview either.
    const without = await world.berth('converge', 'box', '--yes', '--digest', digest, '--json');
    assert.equal(without.code, 1);
    assert.equal(JSON.parse(without.stdout).code, 'digest_stale');
    assert.match(JSON.parse(without.stdout).refused, /signing of idp is no longer asked to rotate/);
    assert.equal(await readFile(at('etc/idp/signing.key'), 'utf8'), was);
  });

  it("rotates a tls secret: a new key, and its certificate from the state's CA", {
    skip,
  }, async () => {
    const before = new X509Certificate(await readFile(at('etc/idp/tls.pem')));
    const preview = await world.berth('converge', 'box', '--rotate', 'tls');
    assert.match(
      preview.stdout,
      /rotate tls: a new ec-p256 key and its certificate from the state's CA for idp\.example\.test, for 90 days, kid \S+, in place of kid \S+;/,
    );
    const act = await world.actOn(preview, 'converge', 'box', '--rotate', 'tls');
    assert.equal(act.code, 0, act.stderr);
    const after = new X509Certificate(await readFile(at('etc/idp/tls.pem')));
    assert.notEqual(after.fingerprint256, before.fingerprint256);
    assert.equal(after.subjectAltName, 'DNS:idp.example.test');
    const ca = join(world.dir, 'ca.pem');
    await writeFile(ca, (await world.berth('ca')).stdout);
    assert.equal(
      execFileSync('openssl', ['verify', '-CAfile', ca, at('etc/idp/tls.pem')], {
        encoding: 'utf8',
      }).trim(),
      `${at('etc/idp/tls.pem')}: OK`,
    );
    assert.ok(after.checkPrivateKey(createPrivateKey(await readFile(at('etc/idp/tls.key')))));
  });

  it('refuses --rotate of a name no module has, or of a random secret, in words with a code', async () => {
    const unknown = await world.berth('converge', 'box', '--rotate', 'signin', '--json');
    assert.equal(unknown.code, 1);
    assert.equal(JSON.parse(unknown.stdout).code, 'rotate_unknown');
    assert.match(
      JSON.parse(unknown.stdout).refused,
      /--rotate signin names no secret of the modules box is to run; did you mean signing\?/,
    );
    const random = await world.berth('converge', 'box', '--rotate', 'client', '--json');
    assert.equal(random.code, 1);
    assert.equal(JSON.parse(random.stdout).code, 'rotate_not_a_key');
  });
});

describe('a tls certificate renewed in the last third of its life, the clock given', () => {
  let world: World;
  const at = (path: string) => join(world.root, path);
  const DAY = 86_400_000;
  const minted = new Date('2026-01-01T00:00:00.000Z');

  /** A converge of box at `now`, through the runner the command line uses: its words and exit. */
  async function convergeAt(now: Date, digest?: string) {
    const opened = await openAct(
      shapeOf('converge'),
      { node: 'box', module: '', yes: digest !== undefined, digest },
      fileDeps({ dir: world.state, createIfMissing: false }),
      { actor: 'tester', via: 'cli', line: {}, now: () => now },
    );
    if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
    return answerOf(await opened.run());
  }

  before(async () => {
    world = await makeWorld({ idp: IDP });
    assert.equal((await world.berth('assign', 'box', 'idp')).code, 0);
    const preview = await convergeAt(minted);
    const act = await convergeAt(minted, preview.digest);
    assert.equal(act.refused, undefined, act.said);
  });
  after(() => world?.cleanup());

  it('is not renewed before two thirds of its life, and is renewed after, said in the preview', {
    skip,
  }, async () => {
    const first = new X509Certificate(await readFile(at('etc/idp/tls.pem')));
    assert.equal(
      new Date(first.validTo).toISOString(),
      new Date(minted.getTime() + 90 * DAY).toISOString(),
    );
    const early = await convergeAt(new Date(minted.getTime() + 59 * DAY));
    assert.match(early.said, /box is as assigned: nothing to do/);
    const late = new Date(minted.getTime() + 61 * DAY);
    const preview = await convergeAt(late);
    assert.match(
      preview.said,
      new RegExp(
        `renew tls's certificate: it ends at ${new Date(minted.getTime() + 90 * DAY).toISOString()}, in the last third of its life; a new key and certificate from the state's CA for idp\\.example\\.test, for 90 days, written to /etc/idp/tls\\.key and /etc/idp/tls\\.pem\\n`,
      ),
    );
    assert.match(preview.said, /run setup/);
    const act = await convergeAt(late, preview.digest);
    assert.equal(act.refused, undefined, act.said);
    assert.match(act.said, /renewed tls of idp: a new key and certificate from the state's CA/);
    const renewed = new X509Certificate(await readFile(at('etc/idp/tls.pem')));
    assert.equal(
      new Date(renewed.validTo).toISOString(),
      new Date(late.getTime() + 90 * DAY).toISOString(),
    );
    assert.notEqual(
      renewed.publicKey.export({ format: 'pem', type: 'spki' }),
      first.publicKey.export({ format: 'pem', type: 'spki' }),
    );
    assert.ok(renewed.checkPrivateKey(createPrivateKey(await readFile(at('etc/idp/tls.key')))));
    assert.match((await convergeAt(late)).said, /nothing to do/);
    assert.ok((await readdir(at('etc/idp'))).includes('tls.pem'));
  });

  it('is renewed when the names the node renders change', async () => {
    const now = new Date(minted.getTime() + 62 * DAY);
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { host: 'idp2.example.test' } },
    });
    const preview = await convergeAt(now);
    assert.match(
      preview.said,
      /renew tls's certificate: it is for idp\.example\.test, not idp2\.example\.test; a new key and certificate from the state's CA for idp2\.example\.test/,
    );
    const act = await convergeAt(now, preview.digest);
    assert.equal(act.refused, undefined, act.said);
    assert.equal(
      new X509Certificate(await readFile(at('etc/idp/tls.pem'))).subjectAltName,
      'DNS:idp2.example.test',
    );
  });
});
