/** `npm start`: the README's first command, on this machine, with the example catalog. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/first-run.sh');
const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');

describe('the first run (npm start)', () => {
  let state: string;
  before(async () => {
    state = await mkdtemp(join(tmpdir(), 'berth-first-run-'));
  });
  after(() => rm(state, { recursive: true, force: true }));

  it('adopts this machine with every example module surveyed, and changes nothing but its state', async () => {
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile('sh', [SCRIPT], { env: { ...env, BERTH_STATE: state } }, (error, stdout, stderr) =>
        done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^account of local, taken /);
    // Every definition, with the templates it names, was copied and read: none unsurveyed.
    assert.doesNotMatch(run.stdout, /not surveyed/);
    const examples = (await readdir(EXAMPLES)).filter((name) => name.endsWith('.json'));
    for (const name of examples)
      assert.match(run.stdout, new RegExp(`\\n${name.slice(0, -5)}:`), `${name} was surveyed`);
    assert.match(run.stdout, /take local postgresql\)\n$/);
  });
});
