/**
 * A test that changes a file of this machine gives it back however its process ends: a
 * hostile end, a SIGTERM or SIGINT from the runner or the developer in the middle of the
 * test, still leaves the file as it was found, and the process ends by that signal.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const HELPER = join(import.meta.dirname, 'machine-files.ts');

describe('keepAsFound, when the test is stopped midway', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'berth-kept-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    it(`gives the file back on ${signal}, and ends by it`, async () => {
      const path = join(dir, `policy-${signal}`);
      await writeFile(path, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
      // A test that keeps the file, replaces it, says so, and waits as if mid-install.
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `import { writeFileSync } from 'node:fs';
import { keepAsFound } from ${JSON.stringify(HELPER)};
keepAsFound(${JSON.stringify(path)});
writeFileSync(${JSON.stringify(path)}, 'exit 0\\n', { mode: 0o600 });
process.stdout.write('changed\\n');
setInterval(() => {}, 1000);`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      assert.equal(await readFile(path, 'utf8'), 'exit 0\n');
      const ended = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, by) => resolve(by)),
      );
      child.kill(signal);
      assert.equal(await ended, signal);
      assert.equal(await readFile(path, 'utf8'), '#!/bin/sh\nexit 101\n');
      assert.equal((await stat(path)).mode & 0o777, 0o755);
    });
});
