/**
 * berth's unified diffs against GNU `diff -u` on real configuration files (Debian's
 * redis.conf, nginx.conf and postgresql.conf, from the packages .ci/run installs) and
 * edits of them an admin or a module makes: the same hunks, line for line. Then what a
 * preview shows of a diff: changed settings first, comments folded, counted, cut.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { unifiedDiff } from '../src/diff/diff.ts';
import { DIFF_LINES, shownDiff } from '../src/diff/diff-shown.ts';

/** The Debian package holding each file. */
const PACKAGE: Record<string, string> = {
  'redis.conf': 'redis-server',
  'nginx.conf': 'nginx',
  'postgresql.conf': 'postgresql',
};

/** The first of each file's places that exists, as its package lays it out. */
const CORPUS: Record<string, string[]> = {
  'redis.conf': ['/etc/redis/redis.conf'],
  'nginx.conf': ['/etc/nginx/nginx.conf'],
  'postgresql.conf': [
    '/etc/postgresql/15/main/postgresql.conf',
    '/usr/share/postgresql/15/postgresql.conf.sample',
  ],
};

/** Edits of a configuration file, as people and modules make them. */
const EDITS: Record<string, (text: string) => string> = {
  'a setting changed': (text) =>
    text.replace(/^(\w[\w-]*)(\s*=?\s*)(\S+)/m, (_, key, gap) => `${key}${gap}changed`),
  'commented settings set, here and there': (text) => {
    let n = 0;
    return text.replace(/^#\s?(\w[\w.-]* =? ?\S+.*)$/gm, (line, setting) =>
      n++ % 7 === 0 ? setting : line,
    );
  },
  'comments and blank lines left out': (text) =>
    text
      .split('\n')
      .filter((line) => !/^\s*(#|$)/.test(line))
      .join('\n')
      .concat('\n'),
  'a block deleted': (text) => {
    const lines = text.split('\n');
    lines.splice(Math.floor(lines.length / 3), 20);
    return lines.join('\n');
  },
  'lines added at the top and the end': (text) =>
    `# managed by berth\n\n${text}extra_setting yes\ninclude /etc/extra.conf\n`,
  'the last newline gone': (text) => text.replace(/\n$/, ''),
  'lines moved': (text) => {
    const lines = text.split('\n');
    const moved = lines.splice(10, 5);
    lines.splice(lines.length - 10, 0, ...moved);
    return lines.join('\n');
  },
  emptied: () => '',
};

/** GNU diff -u's hunks: its output less the two lines naming the files. */
function gnuDiff(a: string, b: string): Promise<string[]> {
  return new Promise((done, fail) => {
    execFile('diff', ['-u', a, b], { maxBuffer: 64 << 20 }, (error, stdout) => {
      if (error && error.code !== 1) return fail(error);
      const lines = stdout.split('\n').slice(2);
      if (lines.at(-1) === '') lines.pop();
      done(lines);
    });
  });
}

describe('berth diff against GNU diff -u', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-diff-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const [name, places] of Object.entries(CORPUS)) {
    const place = places.find((path) => existsSync(path));
    const skip = !place && `needs ${places.join(' or ')}: apt-get install ${PACKAGE[name]}`;
    describe(name, () => {
      for (const [edit, make] of Object.entries(EDITS)) {
        it(`${edit}, both ways: the same hunks`, { skip }, async () => {
          const original = readFileSync(place as string, 'utf8');
          const edited = make(original);
          assert.notEqual(edited, original, 'the edit changes the file');
          for (const [held, wanted] of [
            [original, edited],
            [edited, original],
          ] as const) {
            const a = join(dir, `${name}.held`);
            const b = join(dir, `${name}.wanted`);
            await writeFile(a, held);
            await writeFile(b, wanted);
            const ours = unifiedDiff(held, wanted, { held: a, wanted: b });
            assert.deepEqual(ours.slice(0, 2), [`--- ${a}`, `+++ ${b}`]);
            assert.deepEqual(ours.slice(2), await gnuDiff(a, b));
          }
        });
      }
    });
  }

  it('an empty side is named by the line before it, as GNU does: -0,0', async () => {
    const a = join(dir, 'empty');
    const b = join(dir, 'two');
    await writeFile(a, '');
    await writeFile(b, 'one\ntwo\n');
    const ours = unifiedDiff('', 'one\ntwo\n', { held: a, wanted: b });
    assert.deepEqual(ours.slice(2), ['@@ -0,0 +1,2 @@', '+one', '+two']);
    assert.deepEqual(ours.slice(2), await gnuDiff(a, b));
    assert.deepEqual(unifiedDiff('x\n', '', { held: a, wanted: b }).slice(2), [
      '@@ -1 +0,0 @@',
      '-x',
    ]);
  });

  it('diffs thousands of lines that all differ at once, as GNU does', async () => {
    const lines = (tag: string) =>
      Array.from({ length: 5_000 }, (_, i) => `${tag} ${i}\n`).join('');
    // How fast is `npm run bench -- diff`; here, that the whole diff comes out, as GNU's.
    const ours = unifiedDiff(lines('a'), lines('b'), { held: 'a', wanted: 'b' });
    await writeFile(join(dir, 'a'), lines('a'));
    await writeFile(join(dir, 'b'), lines('b'));
    assert.deepEqual(ours.slice(2), await gnuDiff(join(dir, 'a'), join(dir, 'b')));
  });

  it('says so, rather than working for long, when the same lines come in another order', () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `key${i} = ${i}\n`);
    const diff = unifiedDiff(lines.join(''), [...lines].reverse().join(''), {
      held: 'a',
      wanted: 'b',
    });
    assert.deepEqual(diff, [
      '--- a',
      '+++ b',
      '(5000 lines against 5000: the same lines in too different an order to show a diff)',
    ]);
    assert.deepEqual(shownDiff(diff, false), diff);
  });
});

describe('what a preview shows of a diff', () => {
  const labels = { held: 'x on box', wanted: 'x as berth writes it' };

  it('counts the lines added and removed, and those that are comments', () => {
    const diff = unifiedDiff('# a\nport 1\n', 'port 2\n', labels);
    assert.deepEqual(shownDiff(diff, false), [
      '--- x on box',
      '+++ x as berth writes it',
      '(+1 −2 lines: 1 of them comments or blank)',
      '@@ -2 +1 @@',
      '-port 1',
      '+port 2',
      '@@ -1 +0,0 @@ only comments or blank lines: +0 −1',
    ]);
  });

  it('shows changed settings first and folds each stretch of comments to one line', () => {
    const comments = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => `# ${tag} ${i}`).join('\n');
    const held = [comments('top', 30), 'port 1', comments('mid', 30), 'maxmemory 2gb', ''].join(
      '\n',
    );
    const wanted = 'port 1\nmaxmemory 1gb\n';
    const shown = shownDiff(unifiedDiff(held, wanted, labels), false);
    assert.deepEqual(shown, [
      '--- x on box',
      '+++ x as berth writes it',
      '(+1 −61 lines: 60 of them comments or blank)',
      // Its context is unchanged lines: the comments removed beside it are folded.
      '@@ -62 +2 @@',
      '-maxmemory 2gb',
      '+maxmemory 1gb',
      // One line for the comments on both sides of the setting that stays.
      '@@ -1,61 +1 @@ only comments or blank lines: +0 −60',
    ]);
  });

  it(`cuts at ${DIFF_LINES} lines, saying how many more; --full-diff shows all of it`, () => {
    const lines = (tag: string) =>
      Array.from({ length: 30 }, (_, i) => `key${i} ${tag}\n`).join('');
    const diff = unifiedDiff(lines('old'), lines('new'), labels);
    const shown = shownDiff(diff, false);
    assert.equal(shown.length, DIFF_LINES + 1);
    assert.equal(shown.at(-1), '… 24 more lines of diff (--full-diff shows them all)');
    assert.deepEqual(shownDiff(diff, true), [
      ...diff.slice(0, 2),
      '(+30 −30 lines)',
      ...diff.slice(2),
    ]);
  });

  it('shows settings with the unchanged lines around them as context', () => {
    const held = 'a 1\nb 2\nc 3\nd 4\ne 5\nf 6\ng 7\nh 8\n';
    const shown = shownDiff(unifiedDiff(held, held.replace('e 5', 'e 50'), labels), false);
    assert.deepEqual(shown.slice(3), [
      '@@ -2,7 +2,7 @@',
      ' b 2',
      ' c 3',
      ' d 4',
      '-e 5',
      '+e 50',
      ' f 6',
      ' g 7',
      ' h 8',
    ]);
  });

  it('shows a last line that lost its newline as GNU does', () => {
    const shown = shownDiff(unifiedDiff('a\nb\n', 'a\nb', labels), false);
    assert.deepEqual(shown.slice(2), [
      '(+1 −1 lines)',
      '@@ -1,2 +1,2 @@',
      ' a',
      '-b',
      '+b',
      '\\ No newline at end of file',
    ]);
  });
});
