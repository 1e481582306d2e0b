/** The Machine contract on a rooted machine: this machine, under a temporary root. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
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

describe('a rooted machine’s hooks', () => {
  it('get the system’s PATH, berth’s LANG, and the HOME of the user berth runs as', async () => {
    const root = await mkdtemp(join(tmpdir(), 'berth-rooted-'));
    const langBefore = process.env.LANG;
    try {
      const machine = rootedMachine(root);
      const said = async () =>
        (await machine.run('printf "%s|%s|%s" "$PATH" "$LANG" "$HOME"', {})).output.split('|');
      process.env.LANG = 'de_DE.UTF-8';
      assert.deepEqual(await said(), [
        '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        'de_DE.UTF-8',
        userInfo().homedir,
      ]);
      delete process.env.LANG;
      assert.equal((await said())[1], 'C.UTF-8');
    } finally {
      if (langBefore === undefined) delete process.env.LANG;
      else process.env.LANG = langBefore;
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('a rooted machine’s facts', () => {
  it('root / is this machine: its hostname, fqdn, default route’s address, codename and arch', async () => {
    const told = (await rootedMachine('/').survey([], undefined, undefined, { facts: true })).facts;
    const sh = async (script: string) => (await run('sh', ['-c', script])).stdout.trim();
    const hostname = await sh('cat /proc/sys/kernel/hostname');
    const address = / src (\S+)/.exec(await sh('ip -o route get 1.0.0.0 || true'))?.[1];
    assert.deepEqual(told, {
      hostname,
      fqdn: (await sh('hostname -f 2>/dev/null || true')) || hostname,
      ...(address ? { address } : {}),
      codename: await sh('. /etc/os-release && printf %s "$VERSION_CODENAME"'),
      arch: await sh('uname -m'),
    });
  });

  it('asks nothing of the kind unless asked', async () => {
    const root = await mkdtemp(join(tmpdir(), 'berth-rooted-'));
    try {
      assert.equal((await rootedMachine(root).survey([])).facts, undefined);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
