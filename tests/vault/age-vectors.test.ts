/**
 * The C2SP age test vectors (the cctv-age package), read from the package as the test
 * runs: every vector for X25519 identities, armored or not, opened through berth's seal
 * as the vault opens a kept value, gives what its header expects — the payload whose
 * SHA-256 it names; or, for one sealed to other identities, berth's words for that; or,
 * for any other failure, berth's words for a value that cannot be opened, with nothing
 * released. Vectors for passphrases (scrypt) and hybrid identities do not apply: berth
 * seals to X25519 recipients alone.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { armor, generateX25519Identity } from 'age-encryption';
import * as vectors from 'cctv-age';
import { ageSeal, heldKeys } from '../../src/vault/seal.ts';

/** The header keys the vectors' format defines; a vector with another is to be ignored. */
const KEYS = new Set([
  'expect',
  'payload',
  'identity',
  'passphrase',
  'armored',
  'compressed',
  'file key',
  'comment',
]);

const EXPECTED = [
  'success',
  'no match',
  'HMAC failure',
  'header failure',
  'payload failure',
  'armor failure',
] as const;
type Expected = (typeof EXPECTED)[number];

interface Vector {
  name: string;
  /** Each header line's values, by key, in order. */
  header: Map<string, string[]>;
  /** The age file, armored or binary, as the vector holds it (inflated). */
  file: Uint8Array;
}

/** A vector: its textual header, an empty line, then the age file (zlib-compressed if it says so). */
function readVector(name: string, bytes: Uint8Array): Vector {
  const text = Buffer.from(bytes).toString('latin1');
  const end = text.indexOf('\n\n');
  const header = new Map<string, string[]>();
  for (const line of text.slice(0, end).split('\n')) {
    const colon = line.indexOf(': ');
    const key = line.slice(0, colon);
    header.set(key, [...(header.get(key) ?? []), line.slice(colon + 2)]);
  }
  const body = bytes.subarray(end + 2);
  const compressed = header.get('compressed')?.[0];
  return { name, header, file: compressed === 'zlib' ? inflateSync(body) : body };
}

/** Why a vector does not apply to berth, or undefined when it does. */
function notApplying({ header }: Vector): string | undefined {
  const unknown = [...header.keys()].find((key) => !KEYS.has(key));
  if (unknown !== undefined) return `a key the format does not define: ${unknown}`;
  if (!EXPECTED.includes(header.get('expect')?.[0] as Expected)) return 'an unknown expectation';
  if (header.has('passphrase')) return 'a passphrase (scrypt)';
  // A vector with no identity is refused before one would be asked for: it applies.
  const identities = header.get('identity') ?? [];
  if (!identities.every((identity) => identity.startsWith('AGE-SECRET-KEY-1')))
    return 'an identity that is not X25519';
  const compressed = header.get('compressed')?.[0];
  if (compressed !== undefined && compressed !== 'zlib') return `compressed with ${compressed}`;
  return undefined;
}

/** What berth makes of a vector: its payload's SHA-256, or how it refused it, in its words. */
async function outcome(
  vector: Vector,
): Promise<{ got: Expected | 'refused'; payload?: string; words?: string }> {
  // The vault keeps armored files: a binary vector is armored as age -a would.
  const text =
    vector.header.get('armored')?.[0] === 'yes'
      ? Buffer.from(vector.file).toString('latin1')
      : armor.encode(vector.file);
  // A vector with no identity fails before one is asked for: berth is given one of its own.
  const identities = vector.header.get('identity') ?? [await generateX25519Identity()];
  const seal = ageSeal(heldKeys(identities.join('\n')));
  try {
    const opened = await seal.open(text, 'vector');
    return { got: 'success', payload: createHash('sha256').update(opened).digest('hex') };
  } catch (error) {
    const words = (error as Error).message;
    if (/it was sealed to other recipients$/.test(words)) return { got: 'no match', words };
    if (/^the sealed vector cannot be opened: /.test(words)) return { got: 'refused', words };
    // No identity at all, or one berth cannot read: neither is what the vector tests.
    return { got: 'refused', words: `unexpected: ${words}` };
  }
}

const all = Object.entries(vectors as Record<string, Uint8Array>).map(([name, bytes]) =>
  readVector(name, bytes),
);
const applying = all.filter((vector) => notApplying(vector) === undefined);

describe('the C2SP age test vectors', () => {
  it(`apply to X25519 identities, armored or not: ${applying.length} of the ${all.length}`, (t) => {
    const skipped = new Map<string, number>();
    for (const vector of all) {
      const why = notApplying(vector);
      if (why !== undefined) skipped.set(why, (skipped.get(why) ?? 0) + 1);
    }
    t.diagnostic(`${applying.length} of ${all.length} vectors apply`);
    for (const [why, count] of skipped) t.diagnostic(`${count} do not: ${why}`);
    // Every kind the package ships beside scrypt and hybrid: the armor among them.
    assert.ok(applying.some((vector) => vector.header.get('armored')?.[0] === 'yes'));
    for (const expected of EXPECTED)
      assert.ok(
        applying.some((vector) => vector.header.get('expect')?.[0] === expected),
        `no vector expects ${expected}`,
      );
  });

  it('give through berth’s seal what each expects', async () => {
    const wrong: string[] = [];
    for (const vector of applying) {
      const expected = vector.header.get('expect')?.[0] as Expected;
      const { got, payload, words } = await outcome(vector);
      const said = `${vector.name}: expected ${expected}, got ${got}${words ? ` (${words})` : ''}`;
      if (words?.startsWith('unexpected')) wrong.push(said);
      // Every failure but "no match" is one refusal to berth: a file it cannot open.
      else if (
        expected === 'success' || expected === 'no match' ? got !== expected : got !== 'refused'
      )
        wrong.push(said);
      // A refusal releases nothing, so only a success has a payload to compare.
      else if (got === 'success' && payload !== vector.header.get('payload')?.[0])
        wrong.push(`${vector.name}: a payload whose SHA-256 is not the one expected`);
    }
    assert.deepEqual(wrong, []);
  });
});
