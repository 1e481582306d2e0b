/**
 * age's primitives, node:crypto's (the binary's) and the standards' (Web Crypto and
 * @noble's, any runtime's): each gives the RFCs' answers, and berth's age files made on
 * either are opened by the reference age, and open what it sealed, and each other's.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgePrimitives } from '../../src/vault/age-primitives.ts';
import { nodePrimitives } from '../../src/vault/process-seal.ts';
import { ageSeal, heldKeys, standardPrimitives } from '../../src/vault/seal.ts';
import { ageDecrypt, ageEncrypt, ageUnavailable, keygen } from './support.ts';

const hex = (text: string) => new Uint8Array(Buffer.from(text.replaceAll(' ', ''), 'hex'));
const hexOf = (bytes: Uint8Array | undefined) => bytes && Buffer.from(bytes).toString('hex');
const PRIMITIVES = { 'node:crypto': nodePrimitives, 'Web Crypto and @noble': standardPrimitives };

for (const [name, load] of Object.entries(PRIMITIVES)) {
  describe(`${name}'s primitives give the RFCs' answers`, () => {
    let p: AgePrimitives;
    before(async () => {
      p = await load();
    });

    it('X25519 (RFC 7748, 6.1): each side its public key and the one shared secret', async () => {
      const alice = await p.x25519Private(
        hex('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a'),
      );
      const bob = await p.x25519Private(
        hex('5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb'),
      );
      assert.equal(
        hexOf(alice.publicKey),
        '8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a',
      );
      assert.equal(
        hexOf(bob.publicKey),
        'de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f',
      );
      const shared = '4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742';
      assert.equal(hexOf(await alice.exchange(await p.x25519Public(bob.publicKey))), shared);
      assert.equal(hexOf(await bob.exchange(await p.x25519Public(alice.publicKey))), shared);
    });

    it('X25519: a new key exchanges with a peer as the peer does with it; a low-order point gives none', async () => {
      const ours = await p.x25519Generate();
      const theirs = await p.x25519Generate();
      assert.notEqual(hexOf(ours.publicKey), hexOf(theirs.publicKey));
      const one = await ours.exchange(await p.x25519Public(theirs.publicKey));
      assert.equal(one?.length, 32);
      assert.equal(hexOf(await theirs.exchange(await p.x25519Public(ours.publicKey))), hexOf(one));
      assert.equal(await ours.exchange(await p.x25519Public(new Uint8Array(32))), undefined);
    });

    it('HKDF-SHA-256 (RFC 5869, cases 1 and 3: two blocks; no salt)', () => {
      const ikm = new Uint8Array(22).fill(0x0b);
      const salt = hex('000102030405060708090a0b0c');
      const info = hex('f0f1f2f3f4f5f6f7f8f9');
      assert.equal(
        hexOf(p.hkdf(ikm, salt, info, 42)),
        '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
      );
      assert.equal(
        hexOf(p.hkdf(ikm, undefined, new Uint8Array(0), 42)),
        '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
      );
    });

    it('HMAC-SHA-256 (RFC 4231, case 2)', () => {
      const text = (words: string) => new TextEncoder().encode(words);
      assert.equal(
        hexOf(p.hmac(text('Jefe'), text('what do ya want for nothing?'))),
        '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
      );
    });

    it("ChaCha20-Poly1305 (RFC 8439, 2.8.2's key, nonce and text, without its AAD, as age seals): the other's answer; a changed byte or nonce opens nothing", async () => {
      const key = hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
      const nonce = hex('070000004041424344454647');
      const plain = new TextEncoder().encode(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
      );
      const sealed = p.seal(key, nonce, plain);
      assert.equal(sealed.length, plain.length + 16);
      // RFC 8439's ciphertext: the keystream does not depend on the AAD, only the tag does.
      assert.equal(
        hexOf(sealed.subarray(0, 16)),
        'd31a8d34648e60db7b86afbc53ef7ec2',
        'the first block as the RFC has it',
      );
      const other = await (name === 'node:crypto' ? standardPrimitives : nodePrimitives)();
      assert.equal(hexOf(sealed), hexOf(other.seal(key, nonce, plain)));
      assert.equal(
        new TextDecoder().decode(p.open(key, nonce, sealed)),
        new TextDecoder().decode(plain),
      );
      const altered = new Uint8Array(sealed);
      altered[5] = (altered[5] as number) ^ 1;
      assert.equal(p.open(key, nonce, altered), undefined);
      assert.equal(p.open(key, hex('070000004041424344454648'), sealed), undefined);
      assert.equal(p.open(key, nonce, sealed.subarray(0, 15)), undefined);
    });
  });
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = ageUnavailable();

describe("age files on each one's primitives and the reference age", () => {
  let dir: string;
  let ada: { file: string; recipient: string };
  let bob: { file: string; recipient: string };
  /** Sizes on each side of the 64 KiB chunk's edge, and none at all. */
  const sizes = [0, 1, 65_536, 65_537];
  const bytesOf = (size: number) => Buffer.alloc(size).map((_, i) => 33 + ((i * 31 + 7) % 94));

  before(async () => {
    if (skip) return;
    dir = await mkdtemp(join(tmpdir(), 'berth-primitives-'));
    ada = await keygen(dir, 'ada');
    bob = await keygen(dir, 'bob');
  });
  after(async () => {
    if (skip) return;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const [name, load] of Object.entries(PRIMITIVES)) {
    const other = name === 'node:crypto' ? 'Web Crypto and @noble' : 'node:crypto';

    it(`${name}: age -d opens what berth sealed to two recipients, and ${other}'s opens it too`, {
      skip,
    }, async () => {
      const identity = await readFile(ada.file, 'utf8');
      const seal = ageSeal(heldKeys(identity, [ada.recipient, bob.recipient]), load);
      const opener = ageSeal(heldKeys(identity), PRIMITIVES[other as keyof typeof PRIMITIVES]);
      const values = sizes.map(bytesOf);
      const sealed = await seal.seal(values, async () => false);
      for (const [index, text] of sealed.entries()) {
        const value = values[index] as Buffer;
        assert.deepEqual(ageDecrypt(text, ada.file), value, `${value.length} bytes, ada`);
        assert.deepEqual(ageDecrypt(text, bob.file), value, `${value.length} bytes, bob`);
        assert.deepEqual(
          Buffer.from(await opener.open(text, 'x')),
          value,
          `${value.length}, ${other}`,
        );
      }
    });

    it(`${name}: berth opens what age -r sealed, to it alone or among others; not what was sealed to others`, {
      skip,
    }, async () => {
      const seal = ageSeal(heldKeys(await readFile(ada.file, 'utf8')), load);
      for (const size of sizes) {
        const value = Buffer.from(bytesOf(size)).toString('latin1');
        for (const to of [[ada.recipient], [bob.recipient, ada.recipient]]) {
          const opened = await seal.open(ageEncrypt(value, to), `value of ${size} bytes`);
          assert.equal(Buffer.from(opened).toString('latin1'), value, `${size} bytes`);
        }
      }
      await assert.rejects(
        seal.open(ageEncrypt('bob-only', [bob.recipient]), 'value of x'),
        /the sealed value of x cannot be opened with the identity berth was given: it was sealed to other recipients/,
      );
    });
  }
});
