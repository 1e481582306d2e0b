/**
 * A target's progress as an operator sees it: in a pipe, each step as it comes prefixed
 * by its node and no colour; on a pseudo-terminal (util-linux `script`), a line a node
 * redrawn in place on standard error with its stage and elapsed time, coloured unless
 * NO_COLOR is set.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BERTH, digestOf, makeWorld, type World } from './helpers/world.ts';

/** Runs berth on a pseudo-terminal: standard output and error both arrive as the terminal's. */
function onTerminal(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { NODE_EXTRA_CA_CERTS: _, NO_COLOR: __, ...rest } = process.env;
  const command = [process.execPath, BERTH, ...args].map((word) => `'${word}'`).join(' ');
  return new Promise((done, fail) => {
    execFile(
      'script',
      ['-q', '-e', '-c', command, '/dev/null'],
      { env: { ...rest, TERM: 'xterm', ...env }, timeout: 60_000 },
      // Escapes made visible, so the test's patterns stay plain text.
      (error, stdout) => (error ? fail(error) : done(stdout.replaceAll('\u001b', 'ESC'))),
    );
  });
}

describe("a target's progress", () => {
  let world: World;
  const start = async () => {
    for (const node of ['web1', 'web2'])
      await mkdir(join(world.dir, node, 'etc'), { recursive: true }).catch(() => {});
    const preview = await world.berth('converge', '@web');
    return digestOf(preview.stdout);
  };

  before(async () => {
    world = await makeWorld({
      app: {
        description: 'an app',
        files: { '/etc/app.conf': { content: 'port 80\n' } },
        start: 'echo "up on $BERTH_NODE"; sleep 0.4',
        // Long enough that the view is drawn more than once (it redraws 100 ms after a change).
        stop: 'sleep 0.3',
      },
      beat: { description: 'a hook alone', start: 'sleep 0.3' },
    });
    const nodes = Object.fromEntries(
      ['web1', 'web2'].map((node) => [node, { root: join(world.dir, node) }]),
    );
    await world.writeSettings({ nodes, groups: { web: ['web1', 'web2'] } });
  });
  after(() => world.cleanup());

  test('in a pipe: each step and hook line as it comes, prefixed by its node, no colour', async () => {
    await world.berth('assign', '@web', 'app');
    const act = await world.berth('converge', '@web', '--yes', '--digest', await start());
    assert.equal(act.code, 0, act.stderr);
    const lines = act.stdout.split('\n');
    for (const node of ['web1', 'web2']) {
      const wrote = lines.indexOf(`${node}: wrote /etc/app.conf`);
      const hook = lines.findIndex(
        (line) => line.startsWith(`${node}: `) && line.endsWith(`up on ${node}`),
      );
      const ran = lines.indexOf(`${node}: ran start of app`);
      assert.ok(wrote >= 0 && wrote < hook && hook < ran, act.stdout);
    }
    assert.match(act.stdout, /recap of converge @web:\n {2}web1: done in/);
    assert.equal((act.stdout + act.stderr).includes('\u001b'), false);
  });

  test('on a terminal: a line a node, redrawn in place, with stage and time, in colour', async () => {
    await world.berth('unassign', '@web', 'app');
    const seen = await onTerminal([
      '--state',
      world.state,
      'converge',
      '@web',
      '--yes',
      '--digest',
      await start(),
    ]);
    // Redrawn in place: the cursor goes back up over the node lines.
    assert.match(seen, /ESC\[2A/);
    assert.match(seen, /\rESC\[2Kweb1: (ESC\[32m)?done(ESC\[0m)? \d+\.\ds/);
    assert.match(seen, /ESC\[32mdoneESC\[0m/);
    // Then everything said, the recap last.
    assert.match(seen, /recap of converge @web:\r?\n {2}web1: done in/);
  });

  test('on a terminal with NO_COLOR: the same view without colour', async () => {
    await world.berth('assign', '@web', 'beat');
    const seen = await onTerminal(
      ['--state', world.state, 'converge', '@web', '--yes', '--digest', await start()],
      { NO_COLOR: '1' },
    );
    assert.match(seen, /\rESC\[2Kweb2: done \d+\.\ds/);
    assert.doesNotMatch(seen, /ESC\[3\dm/);
  });
});
