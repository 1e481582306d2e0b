/**
 * The README's quick start, as printed: its shell blocks run in order in an empty
 * directory against the built binary, `D` standing for the digest the command before
 * printed, and berth.json given the groups its words name before the last block.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const README = resolve(import.meta.dirname, '../../README.md');
const BERTH = resolve(import.meta.dirname, '../../dist/berth.mjs');

/** `berth` as the README types it: the built binary, `D` the last digest it printed. */
const berthFunction = `
berth() {
  args=()
  for a in "$@"; do if [ "$a" = D ]; then args+=("$(cat "$DIGEST")"); else args+=("$a"); fi; done
  node ${JSON.stringify(BERTH)} "\${args[@]}" > "$OUT" || { cat "$OUT"; return 1; }
  cat "$OUT"
  awk '/^digest /{d=$2} END{if (d) print d}' "$OUT" > "$OUT.d"
  if [ -s "$OUT.d" ]; then mv "$OUT.d" "$DIGEST"; fi
}
`;

async function quickStart(): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const section = readme.slice(
    readme.indexOf('## Quick start'),
    readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
  );
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  assert.equal(blocks.length, 3, 'the quick start has three shell blocks');
  const [nodes = '', take = '', group = ''] = blocks;
  // The words between the second block and the third name what berth.json gains.
  const between = section.slice(section.indexOf(take) + take.length, section.indexOf(group));
  const added = [...between.matchAll(/`("\w+": \{.*?\})`/g)].map((match) => match[1]);
  assert.equal(added.length, 2, 'groups and run are named before they are used');
  const edit = `node -e 'const fs = require("node:fs"); const p = "state/berth.json";
fs.writeFileSync(p, JSON.stringify({ ...JSON.parse(fs.readFileSync(p, "utf8")), ...{${added.join(', ').replaceAll("'", "'\\''")}} }))'\n`;
  return `set -eu\n${berthFunction}${nodes}${take}${edit}${group}`;
}

describe("the README's quick start", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-quick-start-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('runs from an empty directory, command by command, and leaves what it says', async () => {
    const script = await quickStart();
    const { BERTH_STATE: _, ...env } = process.env;
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        'bash',
        ['-c', script],
        { cwd: dir, env: { ...env, OUT: join(dir, 'out'), DIGEST: join(dir, 'digest') } },
        (error, stdout, stderr) =>
          done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const box1 = await readFile(join(dir, 'try/box1/etc/hello/hello.conf'), 'utf8');
    assert.match(box1, /^greeting = hi\ntoken = \S+\n$/);
    // The secret found on box2 was taken, never minted over, and placed in its file.
    assert.equal(await readFile(join(dir, 'try/box2/etc/hello/token'), 'utf8'), 'by-hand');
    assert.equal(
      await readFile(join(dir, 'try/box2/etc/hello/hello.conf'), 'utf8'),
      'greeting = hi\ntoken = by-hand\n',
    );
    assert.match(
      run.stdout,
      /box1 \(root .*\/try\/box1\)\n {2}to run: hello \(assigned; berth\.json run\.@boxes\)/,
    );
    assert.match(run.stdout, /\(cli\) take box2 hello: done/);
  });
});
