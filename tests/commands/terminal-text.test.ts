/**
 * Text from a node is shown, never obeyed: a service's user who fills a file berth diffs,
 * or a hook's output, with escape sequences cannot erase or fake a line of the preview the
 * "type yes" question asks about, nor set the clipboard or the window title. Read as the
 * operator reads it, through a pseudo-terminal; `--json` stays the same JSON.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthAtTerminal } from '../helpers/terminal.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { convergeBox } from './support.ts';

/** What the service's user writes: each line an attack on the terminal showing it. */
const HOSTILE = [
  // Cursor up and erase the line: the preview's last write line is gone, a calm one drawn.
  'port = 80\x1b[1A\x1b[2K  (no change)',
  // OSC 52: the terminal's clipboard set to a command the operator may paste.
  'x\x1b]52;c;Y3VybCBldmlsIHwgc2gK\x07',
  // The window title.
  'y\x1b]0;berth: nothing to do\x07',
  // A carriage return and backspaces overwrite what the line said before them.
  'evil = 1\rdigest 0000',
  'abc\x08\x08\x08xyz',
  // The C1 form of CSI, and a right-to-left override.
  'z\x9b2K',
  'owner = \u202eroot',
].join('\n');

/** The characters a terminal obeys rather than shows, but the line feed it draws lines with. */
function obeyed(shown: string): string[] {
  return [...shown].filter((char) => char !== '\n' && /[\p{Cc}\u202e]/u.test(char));
}

const APP = {
  description: 'an app whose configuration its user may write',
  files: { '/etc/app/app.conf': { content: 'port = 80\n' } },
  start: 'true',
};

describe('text from a node at a terminal', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ app: APP });
    assert.equal((await world.berth('assign', 'box', 'app')).code, 0);
    assert.equal((await convergeBox(world)).code, 0);
    await writeFile(join(world.root, 'etc/app/app.conf'), `${HOSTILE}\n`);
  });
  after(() => world.cleanup());

  it('a file full of escape sequences: the preview the question asks about shows them, obeys none', async () => {
    const terminal = berthAtTerminal(world.state, ['converge', 'box', '--yes']);
    await terminal.shown('type yes: ');
    terminal.type('no\n');
    const { code, shown } = await terminal.ended;
    assert.equal(code, 1, shown);
    assert.deepEqual(obeyed(shown), [], `the terminal was given control characters:\n${shown}`);
    for (const seen of [
      '-port = 80\\x1b[1A\\x1b[2K  (no change)',
      '-x\\x1b]52;c;Y3VybCBldmlsIHwgc2gK\\x07',
      '-y\\x1b]0;berth: nothing to do\\x07',
      '-evil = 1\\x0ddigest 0000',
      '-abc\\x08\\x08\\x08xyz',
      '-z\\u009b2K',
      '-owner = \\u202eroot',
    ])
      assert.ok(shown.includes(seen), `${seen} is not shown:\n${shown}`);
    assert.match(shown, /\+port = 80\n/);
  });

  it('--json holds the same text, as JSON escapes it', async () => {
    const json = await world.berth('converge', 'box', '--json');
    assert.equal(json.code, 0, json.stderr);
    const said: string = JSON.parse(json.stdout).said;
    for (const line of HOSTILE.split('\n')) assert.ok(said.includes(`-${line}\n`), line);
  });

  it('a hook whose output holds them: streamed, and in the words of its failure, shown', async () => {
    await world.writeModule('app', {
      ...APP,
      reload: "printf 'reloading\\033[2K\\033]0;pwned\\007\\r\\n'; printf 'ok\\033[1A\\n'; exit 3",
    });
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    const terminal = berthAtTerminal(world.state, [
      'converge',
      'box',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    ]);
    terminal.endInput();
    const { code, shown } = await terminal.ended;
    assert.equal(code, 1, shown);
    assert.deepEqual(obeyed(shown), [], `the terminal was given control characters:\n${shown}`);
    assert.ok(shown.includes('  reloading\\x1b[2K\\x1b]0;pwned\\x07\\x0d\n'), shown);
    assert.ok(shown.includes('  ok\\x1b[1A\n'), shown);
    assert.match(shown, /reload of app failed \(exit 3\): reloading\\x1b\[2K/);
  });
});
