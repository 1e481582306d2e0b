/** The inventory's ssh entries, and the machine each node gets from it. */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as v from 'valibot';
import { machinesOf } from '../../src/machines/machines-of.ts';
import { SettingsSchema } from '../../src/model/settings.ts';

const settingsOf = (nodes: unknown) => v.safeParse(SettingsSchema, { nodes });

describe('an ssh node in berth.json', () => {
  it('takes a destination, and optionally a port and sudo', () => {
    const parsed = settingsOf({
      web1: { ssh: 'admin@web1.lan', port: 2222, sudo: true },
      web2: { ssh: 'web2' },
    });
    assert.ok(parsed.success);
    assert.deepEqual(parsed.output.nodes.web1, { ssh: 'admin@web1.lan', port: 2222, sudo: true });
    assert.deepEqual(parsed.output.nodes.web2, { ssh: 'web2' });
  });

  it('refuses a port that is not a whole number from 1 to 65535, and a sudo that is not true or false', () => {
    for (const port of [0, 65_536, 22.5, '22', -1]) {
      assert.equal(settingsOf({ web1: { ssh: 'web1', port } }).success, false, `port ${port}`);
    }
    assert.equal(settingsOf({ web1: { ssh: 'web1', sudo: 'yes' } }).success, false);
    assert.equal(settingsOf({ web1: { ssh: 'web1', user: 'admin' } }).success, false);
    assert.equal(settingsOf({ box: { root: '/srv/box', port: 22 } }).success, false);
  });
});

describe('sshConfig in berth.json', () => {
  it('takes a file name, and refuses one that is empty or not a string', () => {
    const parsed = v.safeParse(SettingsSchema, { sshConfig: 'ssh_config' });
    assert.ok(parsed.success);
    assert.equal(parsed.output.sshConfig, 'ssh_config');
    assert.equal(v.parse(SettingsSchema, {}).sshConfig, undefined);
    for (const sshConfig of ['', 22, true]) {
      assert.equal(v.safeParse(SettingsSchema, { sshConfig }).success, false, `${sshConfig}`);
    }
  });
});

describe('machinesOf', () => {
  // The ssh machines' private runtime directory goes here, not into the machine's own.
  const runtime = mkdtempSync(join(tmpdir(), 'berth-runtime-'));
  process.env.XDG_RUNTIME_DIR = runtime;
  after(() => rmSync(runtime, { recursive: true, force: true }));
  const settings = v.parse(SettingsSchema, {
    nodes: {
      web1: { ssh: 'admin@web1.lan', port: 2222 },
      web2: { ssh: 'admin@web1.lan', sudo: true },
    },
  });

  it('gives a node the same ssh machine every time in a process, so its connection is shared', () => {
    assert.equal(machinesOf(settings)('web1'), machinesOf(settings)('web1'));
    assert.notEqual(machinesOf(settings)('web1'), machinesOf(settings)('web2'));
    assert.deepEqual(readdirSync(runtime), ['berth-ssh'], 'one runtime directory');
    assert.equal(statSync(join(runtime, 'berth-ssh')).mode & 0o777, 0o700, 'a private one');
  });

  it('an sshConfig that cannot be read makes its ssh nodes unreachable, naming it', async () => {
    const missing = join(runtime, 'no-such-ssh_config');
    const withConfig = v.parse(SettingsSchema, { ...settings, sshConfig: missing });
    await assert.rejects(machinesOf(withConfig)('web1').survey([]), {
      failure: 'unreachable',
      message: `${missing}, the sshConfig of berth.json, cannot be read: there is no such file`,
    });
  });

  it('a node that is not in the inventory is unreachable', async () => {
    await assert.rejects(machinesOf(settings)('nope').survey([]), { failure: 'unreachable' });
  });
});
