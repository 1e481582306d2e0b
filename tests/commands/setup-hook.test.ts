/**
 * The `setup` hook, through the real binary on a rooted node: run once its module's files
 * and secrets are in place and before its start or reload, whenever the module is
 * installed or a file or secret of it changed, named in the preview, with the module's
 * values and the node's facts in its environment; a failure stops the module as a failed
 * start does, and a setup that failed, timed out or was cut is owed until one succeeds.
 */
import assert from 'node:assert/strict';
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startBerth } from '../helpers/reliability.ts';
import { until } from '../helpers/safety.ts';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';

/** A service whose every hook writes its name to a log on the node. */
function service(setup: string, timeout?: string) {
  return {
    description: 'a service with a setup',
    values: { port: { type: 'integer', default: 8080 } },
    secrets: { token: { path: '/etc/svc/token' } },
    files: { '/etc/svc/svc.conf': { content: 'port = {{value port}}\n' } },
    setup,
    start: 'echo start >> "$BERTH_ROOT/log"',
    reload: 'echo reload >> "$BERTH_ROOT/log"',
    ...(timeout ? { timeout } : {}),
  };
}

/** A setup that needs what berth placed, logs itself and what it was told. */
const SETUP = [
  'test -f "$BERTH_ROOT/etc/svc/svc.conf" && test -f "$BERTH_ROOT/etc/svc/token"',
  'echo setup >> "$BERTH_ROOT/log"',
  'echo "$BERTH_MODULE $BERTH_VALUE_PORT $BERTH_FACT_NODE $BERTH_FACT_HOST" > "$BERTH_ROOT/env"',
].join(' && ');

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('the setup hook', () => {
  let world: World;
  const log = async () =>
    (await readFile(join(world.root, 'log'), 'utf8').catch(() => ''))
      .trim()
      .split('\n')
      .filter(Boolean);
  const record = async () =>
    JSON.parse(await readFile(join(world.state, 'nodes/box/record.json'), 'utf8')).managed.svc;
  const converge = async () => {
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    return { preview, act: await world.actOn(preview, 'converge', 'box') };
  };

  before(async () => {
    world = await makeWorld({ svc: service(SETUP) });
    assert.equal((await world.berth('assign', 'box', 'svc')).code, 0);
  });
  after(() => world?.cleanup());

  it('runs once its files and secrets are in place, before start, named in the preview, with values and facts', async () => {
    const { preview, act } = await converge();
    assert.match(
      preview.stdout,
      /write \/etc\/svc\/svc\.conf \(mode 0644\)\n {2}run setup: test -f/,
    );
    assert.match(preview.stdout, /run setup: .*\n {2}run start: echo start/);
    assert.equal(act.code, 0, act.stderr);
    assert.match(act.stdout, /ran setup of svc\n/);
    assert.deepEqual(await log(), ['setup', 'start']);
    assert.equal(await readFile(join(world.root, 'env'), 'utf8'), 'svc 8080 box localhost\n');
    assert.equal((await record()).pending, undefined);
  });

  it('runs again only when a file or secret of the module changed, before its reload', async () => {
    const same = await world.berth('converge', 'box');
    assert.match(same.stdout, /nothing to do/);
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { port: 9090 } },
    });
    const { preview, act } = await converge();
    assert.match(
      preview.stdout,
      /write \/etc\/svc\/svc\.conf .*\n(?: {4}.*\n)* {2}run setup: .*\n {2}run reload: /,
    );
    assert.equal(act.code, 0, act.stderr);
    assert.deepEqual(await log(), ['setup', 'start', 'setup', 'reload']);
    assert.match((await world.berth('converge', 'box')).stdout, /nothing to do/);
  });

  it('a setup that fails stops the module as a failed start does, and is owed until it succeeds', async () => {
    await world.writeModule('svc', service(`test -f "$BERTH_ROOT/ready" && ${SETUP}`));
    await rm(join(world.root, 'log'));
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { port: 7070 } },
    });
    const { act } = await converge();
    assert.equal(act.code, 1);
    assert.match(act.stderr, /converge of box stopped at svc: setup of svc failed \(exit 1\)/);
    assert.deepEqual(await log(), [], 'no reload after a setup that failed');
    assert.deepEqual((await record()).pending, ['setup']);
    const json = await world.berth('converge', 'box', '--json');
    assert.equal(JSON.parse(json.stdout).nodes.box.steps.at(-1).kind, 'reload');

    // Nothing changes on the node now; the setup is owed still, and its reload with it.
    const owed = await world.berth('converge', 'box');
    assert.match(owed.stdout, /run setup, which did not finish before and is owed: test -f/);
    assert.match(owed.stdout, /run reload: echo reload/);
    await writeFile(join(world.root, 'ready'), '');
    const done = await world.actOn(owed, 'converge', 'box');
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(await log(), ['setup', 'reload']);
    assert.equal((await record()).pending, undefined);
    assert.match((await world.berth('converge', 'box')).stdout, /nothing to do/);
  });

  it('a setup past its timeout is stopped, and owed', async () => {
    await world.writeModule('svc', service(`sleep 30; ${SETUP}`, '1s'));
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { port: 6060 } },
    });
    const { act } = await converge();
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      /setup of svc did not end within its timeout of 1s, so berth stopped it and all it started/,
    );
    assert.deepEqual((await record()).pending, ['setup']);
  });

  it('an act cut during its setup leaves it owed: the next converge runs it, then the reload', async () => {
    // The setup the last test left owed runs first: nothing is owed when the act begins.
    await world.writeModule('svc', service(SETUP));
    assert.equal((await converge()).act.code, 0);
    assert.equal((await record()).pending, undefined);
    await world.writeModule('svc', service(`touch "$BERTH_ROOT/begun"; sleep 60; ${SETUP}`));
    await rm(join(world.root, 'log'), { force: true });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { port: 5050 } },
    });
    const preview = await world.berth('converge', 'box');
    const act = startBerth([
      '--state',
      world.state,
      'converge',
      'box',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
    ]);
    await until(() => exists(join(world.root, 'begun')), 'the setup began');
    act.child.kill('SIGINT');
    assert.equal((await act.exited).code, 1);
    assert.match(act.stderr(), /interrupted by SIGINT/);
    assert.deepEqual((await record()).pending, ['setup']);
    await world.writeModule('svc', service(SETUP));
    const owed = await world.berth('converge', 'box');
    // Its file was written before the setup was cut: the setup is planned because it is owed.
    assert.match(owed.stdout, /run setup, which did not finish before and is owed/);
    const done = await world.actOn(owed, 'converge', 'box');
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(await log(), ['setup', 'reload']);
  });
});
