/**
 * age's keys as berth reads them: bech32 (BIP 173) recipients in berth.json, checked when
 * it is read (a key whose checksum fails, a key in mixed case, another key's prefix are
 * refused); an identity in either case; a new identity as age-keygen spells it. The files
 * themselves are age-encryption's (tests/vault/age-file.test.ts holds them against the
 * reference age, tests/vault/age-vectors.test.ts against the C2SP vectors).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { identityToRecipient } from 'age-encryption';
import { isAgeRecipient } from '../../src/vault/recipient.ts';
import { ageSeal, heldKeys, type Keys } from '../../src/vault/seal.ts';

/** A pair age-keygen made: the identity, and the recipient `age-keygen -y` says for it. */
const IDENTITY = 'AGE-SECRET-KEY-1F5EVLUPY5J8DLL33MFV3QT22Z2NRRX5XV9QCQS8CQWFRHNKJ68WQGSF00W';
const RECIPIENT = 'age1nurzc2qlqwalyvdnqqeep9g67ffpr689rt4grgfl0j4tewjn55gqsqx29m';
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const value = new TextEncoder().encode('a kept value');

describe("age's keys (bech32, BIP 173)", () => {
  it('opens, with the identity in either case, what was sealed to the recipient age-keygen says for it', async () => {
    const [sealed = ''] = await ageSeal(heldKeys(undefined, [RECIPIENT])).seal(
      [value],
      async () => false,
    );
    for (const identity of [IDENTITY, IDENTITY.toLowerCase()])
      assert.deepEqual(await ageSeal(heldKeys(identity)).open(sealed, 'value'), value);
    assert.ok(isAgeRecipient(RECIPIENT));
    assert.ok(isAgeRecipient(RECIPIENT.toUpperCase()));
  });

  it('refuses a recipient with any one character changed: its checksum fails', () => {
    for (let at = 'age1'.length; at < RECIPIENT.length; at++) {
      const was = RECIPIENT[at] as string;
      const other = CHARSET[(CHARSET.indexOf(was) + 1) % CHARSET.length];
      const changed = `${RECIPIENT.slice(0, at)}${other}${RECIPIENT.slice(at + 1)}`;
      assert.equal(isAgeRecipient(changed), false, changed);
    }
  });

  it("refuses mixed case, another key's prefix, and BIP 173's invalid strings", async () => {
    assert.equal(isAgeRecipient(`AGE1${RECIPIENT.slice(4)}`), false);
    assert.equal(isAgeRecipient(IDENTITY), false);
    await assert.rejects(
      ageSeal(heldKeys(RECIPIENT)).open('', 'value'),
      /the identity berth was given is not an age identity: berth reads lines of AGE-SECRET-KEY-1…/,
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
      assert.equal(isAgeRecipient(text), false, JSON.stringify(text));
  });

  it('makes an identity for a fresh vault, upper case as age-keygen writes it, with its recipient', async () => {
    let kept: { text: string; recipient: string } | undefined;
    const keys: Keys = {
      recipients: async () => undefined,
      identity: async () => ({ looked: ['nowhere'] }),
      keepNewIdentity: async (text, recipient) => {
        kept = { text, recipient };
        return 'kept';
      },
    };
    await ageSeal(keys).seal([value], async () => true);
    assert.match(kept?.text ?? '', /^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$/);
    assert.match(kept?.recipient ?? '', /^age1[02-9ac-hj-np-z]{58}$/);
    assert.equal(await identityToRecipient(kept?.text ?? ''), kept?.recipient);
  });
});
