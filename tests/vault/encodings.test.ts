/**
 * The text of age's keys and files as berth's vault spells and reads it: bech32 (BIP 173)
 * in the keys, base64 (RFC 4648) in the armor. The standards' answers, and what they
 * refuse refused: a key whose checksum fails, a key in mixed case, base64 spelt otherwise
 * than canonically. (tests/vault/age-file.test.ts holds the files against the reference age.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  importIdentity,
  newIdentity,
  recipientBytes,
  recipientOf,
} from '../../src/vault/age-keys.ts';
import { armor, unarmor } from '../../src/vault/armor.ts';
import { nodePrimitives } from '../../src/vault/node-primitives.ts';

/** A pair age-keygen made: the identity, and the recipient `age-keygen -y` says for it. */
const IDENTITY = 'AGE-SECRET-KEY-1F5EVLUPY5J8DLL33MFV3QT22Z2NRRX5XV9QCQS8CQWFRHNKJ68WQGSF00W';
const RECIPIENT = 'age1nurzc2qlqwalyvdnqqeep9g67ffpr689rt4grgfl0j4tewjn55gqsqx29m';
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

describe("age's keys (bech32, BIP 173)", () => {
  it("spells an identity's recipient as age-keygen does, and reads the identity in either case", async () => {
    const primitives = nodePrimitives;
    assert.equal(await recipientOf(IDENTITY, primitives), RECIPIENT);
    assert.equal(await recipientOf(IDENTITY.toLowerCase(), primitives), RECIPIENT);
    assert.equal(recipientBytes(RECIPIENT)?.length, 32);
    assert.equal(recipientBytes(RECIPIENT.toUpperCase())?.length, 32);
  });

  it('refuses a recipient with any one character changed: its checksum fails', () => {
    for (let at = 'age1'.length; at < RECIPIENT.length; at++) {
      const was = RECIPIENT[at] as string;
      const other = CHARSET[(CHARSET.indexOf(was) + 1) % CHARSET.length];
      const changed = `${RECIPIENT.slice(0, at)}${other}${RECIPIENT.slice(at + 1)}`;
      assert.equal(recipientBytes(changed), undefined, changed);
    }
  });

  it("refuses mixed case, another key's prefix, and BIP 173's invalid strings", async () => {
    const primitives = nodePrimitives;
    assert.equal(recipientBytes(`AGE1${RECIPIENT.slice(4)}`), undefined);
    assert.equal(recipientBytes(IDENTITY), undefined);
    await assert.rejects(
      async () => importIdentity(RECIPIENT, primitives),
      /not an AGE-SECRET-KEY-1… identity/,
    );
    for (const text of [
      ' 1nwldj5',
      '\x7f1axkwrx',
      '\x801eym55h',
      'pzry9x0s0muk',
      '1pzry9x0s0muk',
      'x1b4n0q5v',
      'li1dgmt3',
      'de1lg7wt\xff',
      'A1G7SGD8',
      '10a06t8',
      '1qzzfhee',
    ])
      assert.equal(recipientBytes(text), undefined, JSON.stringify(text));
  });

  it('makes identities that read back, upper case as age-keygen writes them', async () => {
    const primitives = nodePrimitives;
    const made = newIdentity();
    assert.match(made, /^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$/);
    assert.match(await recipientOf(made, primitives), /^age1[02-9ac-hj-np-z]{58}$/);
  });
});

describe("age's armor (base64, RFC 4648)", () => {
  const BEGIN = '-----BEGIN AGE ENCRYPTED FILE-----';
  const END = '-----END AGE ENCRYPTED FILE-----';
  const armored = (...lines: string[]) => [BEGIN, ...lines, END, ''].join('\n');
  const ascii = (text: string) => new TextEncoder().encode(text);

  it("gives RFC 4648's answers and reads them back", () => {
    for (const [plain, spelt] of [
      ['f', 'Zg=='],
      ['fo', 'Zm8='],
      ['foo', 'Zm9v'],
      ['foob', 'Zm9vYg=='],
      ['fooba', 'Zm9vYmE='],
      ['foobar', 'Zm9vYmFy'],
    ] as const) {
      assert.equal(armor(ascii(plain)), armored(spelt));
      assert.deepEqual(unarmor(armored(spelt)), ascii(plain));
    }
  });

  it('writes lines of 64 characters and reads them back, whatever the length', () => {
    for (const length of [47, 48, 49, 96, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 151) % 256);
      const text = armor(bytes);
      const lines = text.trim().split('\n').slice(1, -1);
      assert.ok(lines.slice(0, -1).every((line) => line.length === 64));
      assert.deepEqual(unarmor(text), bytes);
    }
  });

  it('refuses every spelling but the canonical one', () => {
    for (const line of [
      'Zh==', // bits set past the last byte
      'Zm9=',
      'Zm-v', // the URL alphabet
      'Zm_v',
      'Zg==Zg==',
      '=Zg=',
      'Z===',
    ])
      assert.deepEqual(unarmor(armored(line)), { broken: 'its armor is not base64' }, line);
  });
});
