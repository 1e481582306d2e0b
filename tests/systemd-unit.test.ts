import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { needs } from './helpers/needs.ts';
import { BERTH } from './helpers/world.ts';

const UNIT = resolve(import.meta.dirname, '../examples/systemd/berth-api.service');

function systemdAnalyze(args: string[]) {
  return new Promise<{ code: number; output: string }>((done) =>
    execFile('systemd-analyze', args, { timeout: 60_000 }, (error, stdout, stderr) => {
      done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    }),
  );
}

describe('examples/systemd/berth-api.service', () => {
  it('takes the identity as a credential, stops with SIGTERM, and waits longer than the 5 s close', async () => {
    const unit = await readFile(UNIT, 'utf8');
    assert.match(unit, /^LoadCredential=berth-identity:\S+$/m);
    assert.match(unit, /^KillSignal=SIGTERM$/m);
    const stop = /^TimeoutStopSec=(\d+)s?$/m.exec(unit);
    assert.ok(stop && Number(stop[1]) > 5, 'TimeoutStopSec above 5 s');
    for (const hardening of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'PrivateTmp=yes'])
      assert.match(unit, new RegExp(`^${hardening}$`, 'm'));
  });

  it('systemd-analyze verify accepts it, with the real berth as its ExecStart', {
    skip: needs('systemd-analyze', 'systemd'),
  }, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-unit-'));
    try {
      const unit = (await readFile(UNIT, 'utf8')).replace('/usr/bin/berth', BERTH);
      const path = join(dir, 'berth-api.service');
      await writeFile(path, unit);
      const verified = await systemdAnalyze(['verify', path]);
      assert.equal(verified.code, 0, verified.output);
      assert.equal(verified.output.trim(), '');
      const security = await systemdAnalyze(['security', '--offline=yes', path]);
      t.diagnostic(security.output.trim().split('\n').at(-1) ?? '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
