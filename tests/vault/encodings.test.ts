/**
 * The text of age's keys and files, berth's own: bech32 (BIP 173) and base64 (RFC 4648)
 * give the standards' answers, refuse what they refuse, and agree with @scure/base (the
 * library berth used before) on every value tried.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { base64, base64nopad, bech32 } from '@scure/base';
import { decode64, encode64 } from '../../src/vault/base64.ts';
import { decodeBech32, encodeBech32 } from '../../src/vault/bech32.ts';

describe('bech32', () => {
  it("reads BIP 173's valid strings, in either case, and spells them again in lower case", () => {
    for (const text of [
      'A12UEL5L',
      'a12uel5l',
      'an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs',
      'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw',
      '11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j',
      'split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w',
      '?1ezyfcl',
    ]) {
      // Only those whose data is whole bytes have bytes; the rest are refused as such.
      const decoded = decodeBech32(text);
      const words = bech32.decode(text as `${string}1${string}`, false).words;
      const whole = bech32.fromWordsUnsafe(words);
      assert.equal(decoded === undefined, whole === undefined, text);
      if (decoded) {
        assert.equal(encodeBech32(decoded.prefix, decoded.bytes), text.toLowerCase());
      }
    }
  });

  it("refuses BIP 173's invalid strings", () => {
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
      assert.equal(decodeBech32(text), undefined, JSON.stringify(text));
  });

  it('refuses mixed case, a changed character and bits left over past the last byte', () => {
    const text = encodeBech32('age', new Uint8Array(32).fill(7));
    assert.ok(decodeBech32(text));
    assert.equal(decodeBech32(`AGE${text.slice(3)}`), undefined);
    const changed = `${text.slice(0, 10)}${text[10] === 'q' ? 'p' : 'q'}${text.slice(11)}`;
    assert.equal(decodeBech32(changed), undefined);
    // One byte is two words of five bits, two of them padding: a third word, or a padding
    // bit set, is refused (as @scure/base refuses it).
    assert.deepEqual(bech32.toWords(Uint8Array.of(0xff)), [31, 28]);
    for (const words of [
      [31, 28, 0],
      [31, 29],
    ]) {
      assert.equal(bech32.fromWordsUnsafe(words), undefined);
      assert.equal(decodeBech32(bech32.encode('age', words)), undefined, String(words));
    }
  });

  it("reads keys longer than BIP 173's 90 characters, as age does", () => {
    const long = encodeBech32('age1pq', new Uint8Array(1200).fill(1));
    assert.ok(long.length > 90);
    assert.deepEqual(decodeBech32(long)?.bytes, new Uint8Array(1200).fill(1));
  });

  it('agrees with @scure/base on random keys, both ways', () => {
    for (let round = 0; round < 300; round++) {
      const bytes = new Uint8Array(randomBytes(1 + (round % 40)));
      const prefix = round % 2 ? 'age' : 'AGE-SECRET-KEY-';
      const ours = encodeBech32(prefix, bytes);
      assert.equal(ours, bech32.encodeFromBytes(prefix, bytes).toLowerCase());
      const theirs = bech32.decodeToBytes(ours);
      assert.deepEqual(decodeBech32(ours), { prefix: theirs.prefix, bytes: theirs.bytes });
      assert.deepEqual(decodeBech32(ours.toUpperCase())?.bytes, bytes);
    }
  });
});

describe('base64', () => {
  const RFC_4648 = ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'];
  const SPELT = ['', 'Zg==', 'Zm8=', 'Zm9v', 'Zm9vYg==', 'Zm9vYmE=', 'Zm9vYmFy'];
  const ascii = (text: string) => new TextEncoder().encode(text);

  it("gives RFC 4648's answers, padded and not, and reads them back", () => {
    RFC_4648.forEach((plain, index) => {
      const padded = SPELT[index] as string;
      const bare = padded.replace(/=+$/, '');
      assert.equal(encode64(ascii(plain), { padded: true }), padded);
      assert.equal(encode64(ascii(plain), { padded: false }), bare);
      assert.deepEqual(decode64(padded, { padded: true }), ascii(plain));
      assert.deepEqual(decode64(bare, { padded: false }), ascii(plain));
    });
  });

  it('refuses every spelling but the canonical one', () => {
    const refused: [string, boolean][] = [
      ['Zh==', true], // bits set past the last byte
      ['Zm9=', true],
      ['Zh', false],
      ['Zg', true], // padding missing
      ['Zg==', false], // padding where none belongs
      ['Zg=', true],
      ['Zm9v=', true],
      ['Z', false],
      ['Z===', true],
      ['Zm9v\n', true],
      ['Zm 9v', false],
      ['Zm-v', false], // the URL alphabet
      ['Zm_v', false],
      ['Zg==Zg==', true],
      ['=Zg=', true],
    ];
    for (const [text, padded] of refused)
      assert.equal(
        decode64(text, { padded }),
        undefined,
        `${JSON.stringify(text)}, padded ${padded}`,
      );
  });

  it('agrees with @scure/base on random values, small and large, both ways', () => {
    for (const length of [0, 1, 2, 3, 31, 32, 33, 48, 200, 0x2000, 0x2001, 100_000]) {
      const bytes = new Uint8Array(randomBytes(length));
      assert.equal(encode64(bytes, { padded: true }), base64.encode(bytes));
      assert.equal(encode64(bytes, { padded: false }), base64nopad.encode(bytes));
      assert.deepEqual(decode64(base64.encode(bytes), { padded: true }), bytes);
      assert.deepEqual(decode64(base64nopad.encode(bytes), { padded: false }), bytes);
    }
  });
});
