/**
 * A take of a module that names packages, on this machine (a node whose root is `/`) with
 * its own apt and Debian's `sl` (not `hello`, which apt-node.test.ts installs and purges
 * beside it): the preview says which are installed and which the next converge installs; a
 * package installed by hand between preview and act refuses the act; the act records the
 * packages found; one missing later is planned like a missing file. Needs root, apt-get and
 * `sl` in the lists; skipped otherwise. `sl` is purged before and after.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { candidateOf, holdMachineApt } from '../helpers/machine-apt.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const DIR = '/etc/berth-test-take-greet';
const FILE = `${DIR}/greeting`;

const found = candidateOf('sl');
const skip = typeof found === 'string' ? false : found.skip;
const CANDIDATE = typeof found === 'string' ? found : '';
const VERSION = CANDIDATE.replaceAll('.', '\\.').replaceAll('+', '\\+');

function apt(...args: string[]) {
  execFileSync('apt-get', ['-y', '-q', '-o', 'DPkg::Lock::Timeout=300', ...args], {
    stdio: 'ignore',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

describe('take of a module with packages, on a node whose root is /', { skip }, () => {
  let release: (() => Promise<void>) | undefined;
  let world: World;
  const greet = { packages: ['sl'], files: { [FILE]: { content: 'hi\n' } } };
  before(async () => {
    release = await holdMachineApt();
    apt('purge', 'sl');
    world = await makeWorld({ greet });
    await world.writeSettings({ nodes: { here: { root: '/' } } });
    // Installed by hand: its file is there, as berth would write it.
    await mkdir(DIR, { recursive: true });
    await writeFile(FILE, 'hi\n');
    assert.equal((await world.berth('adopt', 'here')).code, 0);
  });
  after(async () => {
    apt('purge', 'sl');
    await rm(DIR, { recursive: true, force: true });
    await world.cleanup();
    await release?.();
  });

  it('says a package not installed is for the next converge; one installed by hand after the preview refuses the act', async () => {
    const preview = await world.berth('take', 'here', 'greet');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /\npackage sl: not installed on here; the next converge installs it\n/,
    );
    apt('install', 'sl');
    const act = await world.actOn(preview, 'take', 'here', 'greet');
    assert.equal(act.code, 1);
    assert.match(act.stderr, new RegExp(`package sl is now installed on here at ${VERSION}`));
    assert.deepEqual(Object.keys((await world.readState()).managed?.here ?? {}), []);
  });

  it('records the packages it finds installed, and a converge installs one gone missing since', async () => {
    const preview = await world.berth('take', 'here', 'greet');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(preview.stdout, new RegExp(`\npackage sl: found at ${VERSION}\n`));
    const act = await world.actOn(preview, 'take', 'here', 'greet');
    assert.equal(act.code, 0, act.stderr);
    const managed = (await world.readState()).managed?.here as Record<
      string,
      { packages?: unknown }
    >;
    assert.deepEqual(managed.greet?.packages, { sl: CANDIDATE });
    assert.match(
      (await world.berth('converge', 'here')).stdout,
      /here is as assigned: nothing to do/,
    );
    apt('purge', 'sl');
    const converge = await world.berth('converge', 'here');
    assert.match(converge.stdout, new RegExp(`\n {2}install package sl ${VERSION}\n`));
  });
});
