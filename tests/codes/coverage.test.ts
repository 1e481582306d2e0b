/**
 * The closed list, its documentation and its tests agree: coverage.ts says where each code
 * of src/model/codes.ts is produced (or why it cannot be), docs/codes.md says when each is
 * given; a code added to the list without both fails here.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CODES } from '../../src/model/codes.ts';
import { CELLS, SUITES, WHERE } from './coverage.ts';

const REPO = join(import.meta.dirname, '../..');

describe('every code of the list is produced through the faces, or said why not', () => {
  test('the table names every code of src/model/codes.ts, and no other', () => {
    assert.deepEqual(Object.keys(WHERE).sort(), [...CODES].sort());
  });

  test('the suites the table names are the test files of tests/codes/, this one aside', async () => {
    const files = (await readdir(import.meta.dirname))
      .filter((file) => file.endsWith('.test.ts') && file !== 'coverage.test.ts')
      .map((file) => file.replace(/\.test\.ts$/, ''));
    assert.deepEqual([...SUITES].sort(), files.sort());
  });

  test('each code is produced by a test on the command line or over the API', () => {
    const nowhere = CODES.filter((code) =>
      CELLS.every((cell) => typeof WHERE[code][cell] === 'object' && 'never' in WHERE[code][cell]),
    );
    assert.deepEqual(nowhere, [], 'a code that can arise nowhere is dead');
  });

  test('each cell names a suite of tests/codes/, a test file that asserts the code, or why not', async () => {
    for (const code of CODES)
      for (const cell of CELLS) {
        const where = WHERE[code][cell];
        if (typeof where === 'string') assert.ok(SUITES.includes(where), `${code} on ${cell}`);
        else if ('in' in where) {
          const text = await readFile(join(REPO, where.in), 'utf8');
          assert.ok(text.includes(`'${code}'`), `${where.in} asserts ${code}`);
        } else assert.ok(where.never.length > 20, `${code} on ${cell}: why, in a sentence`);
      }
  });
});

test('docs/codes.md says when each code is given and what to do, and no code beside the list', async () => {
  const doc = await readFile(join(REPO, 'docs/codes.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (.+?) \| (.+?) \|$/gm)];
  assert.deepEqual([...new Set(rows.map((row) => row[1]))].sort(), [...CODES].sort());
});
