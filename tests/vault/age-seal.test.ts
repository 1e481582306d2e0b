/**
 * berth's seal as a converge uses it, many values at once: each age file wrapped with an
 * ephemeral key of its own (one used twice would give away the file keys), berth's identity
 * read once however many values are opened together, and each value opened at once given
 * its own answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { armor, Decrypter, generateX25519Identity, identityToRecipient } from 'age-encryption';
import { ageSeal, heldKeys, type Keys } from '../../src/vault/seal.ts';

const VALUES = 40;
const valuesOf = (count: number) =>
  Array.from({ length: count }, (_, i) => new TextEncoder().encode(`password-${i % 3}`));

/** The X25519 shares an armored age file's header names, one a recipient. */
function sharesOf(sealed: string): string[] {
  const header = new TextDecoder().decode(armor.decode(sealed)).split('\n---')[0] ?? '';
  return [...header.matchAll(/^-> X25519 (\S+)$/gm)].map((match) => match[1] as string);
}

/** `keys`, counting how often berth's identity is read. */
function counted(keys: Keys): Keys & { reads: () => number } {
  let reads = 0;
  return {
    ...keys,
    identity: () => {
      reads++;
      return keys.identity();
    },
    reads: () => reads,
  };
}

describe("berth's seal, many values at once", () => {
  it('wraps each age file with an ephemeral key of its own, for every recipient', async () => {
    const [ada, bob] = await Promise.all([generateX25519Identity(), generateX25519Identity()]);
    const to = await Promise.all([identityToRecipient(ada), identityToRecipient(bob)]);
    const seal = ageSeal(heldKeys(ada, to));
    // The same few values, many times, in one call and in the next.
    const sealed = [
      ...(await seal.seal(valuesOf(VALUES), async () => false)),
      ...(await seal.seal(valuesOf(VALUES), async () => false)),
    ];
    const shares = sealed.flatMap(sharesOf);
    assert.equal(shares.length, 2 * VALUES * 2, 'an X25519 stanza a recipient a file');
    assert.equal(new Set(shares).size, shares.length, 'no ephemeral share used twice');
    // Each opens with either identity through age-encryption's own X25519 identity.
    for (const identity of [ada, bob]) {
      const decrypter = new Decrypter();
      decrypter.addIdentity(identity);
      for (const [index, text] of sealed.entries())
        assert.equal(
          new TextDecoder().decode(await decrypter.decrypt(armor.decode(text))),
          `password-${(index % VALUES) % 3}`,
        );
    }
  });

  it("reads berth's identity once for the values a converge opens and seals together", async () => {
    const identity = await generateX25519Identity();
    const sealed = await ageSeal(heldKeys(identity)).seal(valuesOf(VALUES), async () => false);
    const keys = counted(heldKeys(identity));
    const seal = ageSeal(keys);
    const opened = await Promise.all(sealed.map((text, i) => seal.open(text, `value ${i}`)));
    assert.deepEqual(opened, valuesOf(VALUES));
    await seal.seal(valuesOf(2), async () => false);
    await seal.seal(valuesOf(2), async () => false);
    assert.equal(keys.reads(), 1);
  });

  it('looks for a missing identity again, and keeps it once found', async () => {
    const identity = await generateX25519Identity();
    const [sealed = ''] = await ageSeal(heldKeys(identity)).seal(valuesOf(1), async () => false);
    let given: string | undefined;
    const keys = counted({ ...heldKeys(undefined), identity: () => heldKeys(given).identity() });
    const seal = ageSeal(keys);
    await assert.rejects(
      Promise.all([seal.open(sealed, 'value a'), seal.open(sealed, 'value b')]),
      /berth needs its age identity to open the sealed value a, and found none/,
    );
    given = identity;
    assert.deepEqual(await seal.open(sealed, 'value c'), valuesOf(1)[0]);
    await Promise.all([seal.open(sealed, 'value d'), seal.open(sealed, 'value e')]);
    assert.equal(keys.reads(), 2);
  });

  it('answers each value opened at once as its own: sealed to berth, to others, or altered', async () => {
    const [own, other] = await Promise.all([generateX25519Identity(), generateX25519Identity()]);
    const [ownValue = ''] = await ageSeal(heldKeys(own)).seal(valuesOf(1), async () => false);
    const [otherValue = ''] = await ageSeal(heldKeys(other)).seal(valuesOf(1), async () => false);
    const body = armor.decode(ownValue);
    body[body.length - 1] = (body[body.length - 1] as number) ^ 1;
    const altered = armor.encode(body);
    const seal = ageSeal(heldKeys(own));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => {
        const [text, what] = [
          [ownValue, `own ${i}`],
          [otherValue, `other ${i}`],
          [altered, `altered ${i}`],
        ][i % 3] as [string, string];
        return seal.open(text, what);
      }),
    );
    outcomes.forEach((outcome, i) => {
      if (i % 3 === 0) assert.deepEqual(outcome, { status: 'fulfilled', value: valuesOf(1)[0] });
      else {
        assert.equal(outcome.status, 'rejected');
        const words = (outcome as PromiseRejectedResult).reason.message as string;
        if (i % 3 === 1)
          assert.match(
            words,
            new RegExp(
              `^the sealed other ${i} cannot be opened with the identity berth was given: it was sealed to other recipients$`,
            ),
          );
        else
          assert.match(
            words,
            new RegExp(`^the sealed altered ${i} cannot be opened: (?!.*other recipients)`),
          );
      }
    });
  });
});
