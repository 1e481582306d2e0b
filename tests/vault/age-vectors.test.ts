/**
 * The C2SP age test vectors (the cctv-age package), read from the package as the test
 * runs: every vector for X25519 identities, armored or not, gives the result its header
 * expects on each of berth's primitives — the payload whose SHA-256 it names, or a refusal
 * at the stage it names. Vectors for passphrases (scrypt) and hybrid identities do not
 * apply: berth seals to X25519 recipients alone.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import * as vectors from 'cctv-age';
import { openAge } from '../../src/vault/age-file.ts';
import { importIdentity } from '../../src/vault/age-keys.ts';
import type { AgePrimitives } from '../../src/vault/age-primitives.ts';
import { unarmor } from '../../src/vault/armor.ts';
import { nodePrimitives } from '../../src/vault/process-seal.ts';
import { standardPrimitives } from '../../src/vault/seal.ts';

const PRIMITIVES = { 'node:crypto': nodePrimitives, 'Web Crypto and @noble': standardPrimitives };

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

/**
 * The stage of each of berth's refusals of an age file, in the words a user is told,
 * named as the vectors name the stages. A refusal not here fails the test: its stage is to
 * be said here first.
 */
const STAGES: Record<string, Expected> = {
  'not an age-encryption.org/v1 file': 'header failure',
  'its header has no end': 'header failure',
  'its header is not valid': 'header failure',
  'a stanza of its header is not valid': 'header failure',
  'an X25519 stanza of its header is not valid': 'header failure',
  'an X25519 stanza has a low-order share': 'header failure',
  'it is cut short after its header': 'header failure',
  'its header was altered (its MAC differs)': 'HMAC failure',
  'its payload is cut short': 'payload failure',
  'its payload was altered or cut': 'payload failure',
  'its last chunk is empty': 'payload failure',
};

/** What berth makes of a vector: its payload's SHA-256, or the stage it refused it at, and why. */
async function outcome(
  vector: Vector,
  p: AgePrimitives,
): Promise<{ got: Expected; payload?: string; words?: string }> {
  let file = vector.file;
  if (vector.header.get('armored')?.[0] === 'yes') {
    const binary = unarmor(Buffer.from(file).toString('latin1'));
    if ('broken' in binary) return { got: 'armor failure', words: binary.broken };
    file = binary;
  }
  const identities = await Promise.all(
    (vector.header.get('identity') ?? []).map((identity) => importIdentity(identity, p)),
  );
  const opened = await openAge(file, identities, p);
  if ('unmatched' in opened) return { got: 'no match' };
  if ('broken' in opened) {
    const stage = STAGES[opened.broken];
    assert.ok(stage, `${vector.name}: refused in words of no stage named here: ${opened.broken}`);
    return { got: stage, words: opened.broken };
  }
  return { got: 'success', payload: createHash('sha256').update(opened.value).digest('hex') };
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

  for (const [name, load] of Object.entries(PRIMITIVES))
    it(`give on ${name}'s primitives what each expects`, async () => {
      const p = await load();
      const wrong: string[] = [];
      for (const vector of applying) {
        const expected = vector.header.get('expect')?.[0] as Expected;
        const { got, payload, words } = await outcome(vector, p);
        const said = `${vector.name}: expected ${expected}, got ${got}${words ? ` (${words})` : ''}`;
        if (got !== expected) wrong.push(said);
        // A refusal releases nothing, so only a success has a payload to compare.
        else if (got === 'success' && payload !== vector.header.get('payload')?.[0])
          wrong.push(`${vector.name}: a payload whose SHA-256 is not the one expected`);
      }
      assert.deepEqual(wrong, []);
    });
});
