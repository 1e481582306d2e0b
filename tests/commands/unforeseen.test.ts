/**
 * A failure berth did not foresee reaches the command line's edge as one line in words
 * with code `internal_error`, never as a stack. The failure is a real one, made from
 * outside: standard output on a device that is full (/dev/full), which no check of berth
 * looks for.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { exitOf } from '../../src/model/codes.ts';
import { has } from '../helpers/needs.ts';
import { BERTH, makeWorld, type World } from '../helpers/world.ts';

const FULL = '/dev/full';
const skip = has(FULL) ? false : 'needs /dev/full, a Linux device: run on Linux';

/** berth run with its standard output on /dev/full: its exit, and what it said on standard error. */
function onFullDevice(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  const full = openSync(FULL, 'w');
  const child = spawn(process.execPath, [BERTH, ...args], {
    stdio: ['ignore', full, 'pipe'],
    env: { ...process.env, BERTH_DEBUG: '', ...env },
  });
  closeSync(full);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((done) => child.on('close', (code) => done({ code, stderr })));
}

const WORDS =
  'berth: internal error: ENOSPC: no space left on device, write; berth did not foresee this failure, and what was asked may not have been carried out: report it with these words';

describe('a failure berth did not foresee, on the command line', { skip }, () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('is one line in words on standard error, no stack, with the exit of internal_error', async () => {
    const run = await onFullDevice(['--state', world.state, 'status', 'box']);
    assert.equal(run.stderr, `${WORDS} (BERTH_DEBUG=1 shows where it arose)\n`);
    assert.equal(run.code, exitOf('internal_error'));
  });

  it('with --json, the one envelope, code internal_error, on standard error as standard output failed', async () => {
    const run = await onFullDevice(['--state', world.state, 'status', '@all', '--json']);
    assert.deepEqual(JSON.parse(run.stderr), {
      format_version: 1,
      refused: `${WORDS} (BERTH_DEBUG=1 shows where it arose)`,
      code: 'internal_error',
    });
    assert.equal(run.code, exitOf('internal_error'));
  });

  it('with BERTH_DEBUG set, the same line and then where it arose', async () => {
    const run = await onFullDevice(['--state', world.state, 'status', 'box'], {
      BERTH_DEBUG: '1',
    });
    const [line, ...stack] = run.stderr.trimEnd().split('\n');
    assert.equal(line, WORDS);
    assert.match(stack[0] ?? '', /^Error: ENOSPC: no space left on device, write$/);
    assert.ok(
      stack.some((frame) => /^ {4}at /.test(frame)),
      run.stderr,
    );
    assert.equal(run.code, exitOf('internal_error'));
  });
});
