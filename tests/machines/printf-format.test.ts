// A script that rides in ssh's command reaches the far side's sh byte for byte, whatever
// login shell hands it on: sh and bash, and zsh, fish and tcsh where they are installed
// (.ci/run installs them), each with its own printf (tcsh has none: coreutils' runs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { IN_COMMAND_LIMIT } from '../../src/machines/ssh-machine.ts';
import { printfFormat } from '../../src/machines/ssh-scripts.ts';
import { needs } from '../helpers/needs.ts';

const NASTY = [
  `it's 100% "quoted" \\ back\\slash \\n not a newline`,
  'tab\there, $HOME and `date` and $(id) stay as they are!',
  "a quote then digits: '123 and \\0471",
  'UTF-8: café, 日本, 🚢, and a bell \u0007 and a DEL \u007f',
  '',
  '%s %d %b %%',
].join('\n');

/** What `shell -c "printf '<format>'"` prints: as sshd hands the command to a login shell. */
function printed(shell: string, script: string): Buffer {
  const run = spawnSync(shell, ['-c', `printf '${printfFormat(script)}'`]);
  assert.equal(run.status, 0, run.stderr.toString());
  return run.stdout;
}

describe('a script as a printf format, through a login shell', () => {
  for (const shell of ['sh', 'bash', 'zsh', 'fish', 'tcsh']) {
    it(`comes out byte for byte through ${shell}, as long as berth sends one`, {
      skip: needs(shell, shell === 'sh' ? 'dash' : shell),
    }, () => {
      assert.deepEqual(printed(shell, NASTY), Buffer.from(NASTY));
      // The longest berth puts in a command: 'echo x\n' is 8 characters as a format.
      const lines = Math.floor(IN_COMMAND_LIMIT / 8);
      const run = spawnSync(shell, [
        '-c',
        `printf '${printfFormat('echo x\n'.repeat(lines))}' | sh -s | wc -l`,
      ]);
      assert.equal(run.stdout.toString().trim(), String(lines), run.stderr.toString());
    });
  }

  it('holds nothing a shell would read between single quotes: no quote, no newline, no !', () => {
    const format = printfFormat(NASTY);
    assert.doesNotMatch(format, /['\n!]/);
    assert.match(format, /^[ -~]*$/, 'printable ASCII only');
  });

  it('runs as the script does', () => {
    const script = `x='a b'; printf '%s|' "$x" 1 2\necho " done \\\\ 100%"\n`;
    const run = spawnSync('sh', ['-c', `printf '${printfFormat(script)}' | sh -s`]);
    const direct = spawnSync('sh', ['-s'], { input: script });
    assert.equal(run.stdout.toString(), direct.stdout.toString());
    assert.equal(run.stdout.toString(), 'a b|1|2| done \\ 100%\n');
  });
});
