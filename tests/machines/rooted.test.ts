/** The Machine contract on a rooted machine: this machine, under a temporary root. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { rootedMachine } from '../../src/machines/rooted-machine.ts';
import { machineContract } from './contract.ts';

const run = promisify(execFile);

machineContract('a rooted machine', async () => {
  const root = await mkdtemp(join(tmpdir(), 'berth-rooted-'));
  const machine = rootedMachine(root);
  return {
    machine,
    root,
    exec: async (script) => (await run('sh', ['-c', script])).stdout,
    unreachable: rootedMachine(join(root, 'not-there')),
    // Root may look everywhere: only a test run by another user can stage a refusal.
    unprivileged: process.getuid?.() === 0 ? undefined : machine,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
