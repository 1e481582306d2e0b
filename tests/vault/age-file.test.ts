/**
 * berth's age files (age-encryption's) against the reference age (Debian's): each opens what the other
 * sealed, whatever the size across the 64 KiB chunks of the payload and for several
 * recipients; a file altered or sealed to others is refused in words.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ageSeal, heldKeys, type Seal } from '../../src/vault/seal.ts';
import { ageDecrypt, ageEncrypt, ageUnavailable, keygen } from './support.ts';

/** Sizes on each side of a chunk's edge, and none at all. */
const SIZES = [0, 1, 65_535, 65_536, 65_537, 2 * 65_536, 200_000];
const bytesOf = (size: number) => Buffer.alloc(size, 0).map((_, i) => (i * 31 + 7) % 256);
/** Printable text of that size: what the reference age is given as a string. */
const textOf = (size: number) =>
  Buffer.from(bytesOf(size).map((byte) => 33 + (byte % 94))).toString('latin1');

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = ageUnavailable();

describe("berth's age files and the reference age", () => {
  let dir: string;
  let ada: { file: string; recipient: string };
  let bob: { file: string; recipient: string };
  let seal: Seal;

  before(async () => {
    if (skip) return;
    dir = await mkdtemp(join(tmpdir(), 'berth-age-'));
    ada = await keygen(dir, 'ada');
    bob = await keygen(dir, 'bob');
    seal = ageSeal(heldKeys(await readFile(ada.file, 'utf8'), [ada.recipient, bob.recipient]));
  });
  after(async () => {
    if (skip) return;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('age -d opens what berth sealed to two recipients, with either identity', {
    skip,
  }, async () => {
    const values = SIZES.map(bytesOf);
    const sealed = await seal.seal(values, async () => false);
    sealed.forEach((text, index) => {
      const value = values[index] as Buffer;
      assert.deepEqual(ageDecrypt(text, ada.file), value, `${value.length} bytes, ada`);
      assert.deepEqual(ageDecrypt(text, bob.file), value, `${value.length} bytes, bob`);
    });
  });

  it('berth opens what age -r sealed, to it alone or among others', { skip }, async () => {
    for (const size of SIZES) {
      const value = textOf(size);
      for (const to of [[ada.recipient], [bob.recipient, ada.recipient]]) {
        const opened = await seal.open(ageEncrypt(value, to), `value of ${size} bytes`);
        assert.equal(Buffer.from(opened).toString('latin1'), value, `${size} bytes`);
      }
    }
  });

  it('refuses, in words, a file sealed to others and one altered', { skip }, async () => {
    await assert.rejects(
      seal.open(ageEncrypt('bob-only', [bob.recipient]), 'value of x'),
      /the sealed value of x cannot be opened with the identity berth was given: it was sealed to other recipients/,
    );
    const [sealed = ''] = await seal.seal([bytesOf(100)], async () => false);
    const body = Buffer.from(sealed.split('\n').slice(1, -2).join(''), 'base64');
    body.writeUInt8((body.at(-1) as number) ^ 1, body.length - 1);
    const lines = body.toString('base64').match(/.{1,64}/g) ?? [];
    const altered = [sealed.split('\n')[0], ...lines, sealed.split('\n').at(-2), ''].join('\n');
    await assert.rejects(
      seal.open(altered, 'value of y'),
      // age-encryption's own words follow: berth says only that it cannot open it.
      /the sealed value of y cannot be opened: (?!.*other recipients)/,
    );
  });
});
