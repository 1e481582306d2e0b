import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { digestOf, makeWorld, type World } from '../helpers/world.ts';
import { actOnPreview } from './support.ts';

/** A service whose hooks leave traces on the box: running while $BERTH_ROOT/running exists. */
const SVC = {
  data: ['/var/lib/svc'],
  files: {
    '/etc/svc/a.conf': { content: 'a=1\n' },
    '/etc/svc/b.conf': { content: 'b=1\n' },
  },
  start: 'touch "$BERTH_ROOT/running"',
  stop: 'rm -f "$BERTH_ROOT/running"',
  reload: 'echo "reload $BERTH_MODULE" >> "$BERTH_ROOT/reloads"',
  check:
    'test -f "$BERTH_ROOT/running" || { echo starting up; echo "not running at all"; exit 3; }',
};

async function act(world: World, ...args: string[]) {
  const preview = await world.berth(...args);
  assert.equal(preview.code, 0, preview.stderr);
  const done = await world.berth(...args, '--yes', '--digest', digestOf(preview.stdout));
  assert.equal(done.code, 0, done.stderr);
  return { preview: preview.stdout, said: done.stdout };
}

const reloads = (world: World) =>
  readFile(join(world.root, 'reloads'), 'utf8').catch(() => '(none)');

describe('reload and check', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ svc: SVC });
    assert.equal((await world.berth('assign', 'box', 'svc')).code, 0);
    await act(world, 'converge', 'box');
  });
  afterEach(() => world.cleanup());

  it('reloads once, after all the writes of a module it runs; an install does not reload', async () => {
    assert.equal(await reloads(world), '(none)');
    await world.writeModule('svc', {
      ...SVC,
      files: { '/etc/svc/a.conf': { content: 'a=2\n' }, '/etc/svc/b.conf': { content: 'b=2\n' } },
    });
    const { preview, said } = await act(world, 'converge', 'box');
    assert.match(
      preview,
      /write \/etc\/svc\/a\.conf[\s\S]*write \/etc\/svc\/b\.conf[\s\S]*\n {2}run reload: echo/,
    );
    assert.deepEqual(said.trim().split('\n'), [
      'wrote /etc/svc/a.conf',
      'wrote /etc/svc/b.conf',
      'running reload of svc …',
      'ran reload of svc',
      'box is as assigned',
    ]);
    assert.equal(await reloads(world), 'reload svc\n');
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /nothing to do/);
  });

  it('keeps a reload that failed owed: the next converge plans it until it succeeds', async () => {
    // nginx -t style: the reload checks the whole configuration, and a file berth does
    // not write (an include an admin edits) can break it.
    const checked = {
      ...SVC,
      reload:
        'if grep -q broken "$BERTH_ROOT/etc/svc/include.conf"; then echo "include.conf:1: syntax error"; exit 1; fi; echo "reload $BERTH_MODULE" >> "$BERTH_ROOT/reloads"',
    };
    await world.onBox('/etc/svc/include.conf', 'broken\n');
    await world.writeModule('svc', {
      ...checked,
      files: { ...SVC.files, '/etc/svc/a.conf': { content: 'a=2\n' } },
    });
    const preview = await world.berth('converge', 'box');
    const failed = await actOnPreview(world, preview);
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /^wrote \/etc\/svc\/a\.conf\n/);
    assert.match(
      failed.stderr,
      /stopped at svc: reload of svc failed \(exit 1\): include\.conf:1: syntax error/,
    );
    assert.equal(await reloads(world), '(none)');

    await world.onBox('/etc/svc/include.conf', 'fixed\n');
    const owed = await world.berth('converge', 'box', '--detailed-exitcode');
    assert.equal(owed.code, 2, 'something to do');
    assert.match(
      owed.stdout,
      /update svc:\n {2}run reload, which failed before and is owed: if grep/,
    );
    const done = await actOnPreview(world, owed);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /ran reload of svc\n/);
    assert.equal(await reloads(world), 'reload svc\n');
    const paid = await world.berth('converge', 'box', '--detailed-exitcode');
    assert.equal(paid.code, 0, 'nothing to do once it succeeded');
    assert.match(paid.stdout, /nothing to do/);
  });

  it('journals an act that began and failed as failed, a refused one as refused; status shows the reload owed', async () => {
    await world.writeModule('svc', {
      ...SVC,
      reload: 'echo "include.conf:1: syntax error"; exit 1',
      files: { ...SVC.files, '/etc/svc/a.conf': { content: 'a=2\n' } },
    });
    const failed = await actOnPreview(world, await world.berth('converge', 'box'));
    assert.equal(failed.code, 1);
    const entry = (await world.journal()).at(-1) as Record<string, unknown>;
    assert.equal(entry.outcome, 'failed');
    assert.match(String(entry.error), /^converge of box stopped at svc: reload of svc failed/);
    const log = await world.berth('log');
    assert.match(
      log.stdout.trimEnd().split('\n').at(-1) as string,
      / converge box: failed: converge of box stopped at svc: reload of svc failed \(exit 1\)/,
    );
    const logJson = (await world.berth('log', '--json')).stdout.trimEnd().split('\n');
    assert.equal(JSON.parse(logJson.at(-1) as string).outcome, 'failed');

    const refused = await world.berth('converge', 'box', '--yes', '--digest', 'f'.repeat(64));
    assert.equal(refused.code, 1);
    assert.equal(((await world.journal()).at(-1) as Record<string, unknown>).outcome, 'refused');
    const logged = (await world.berth('log')).stdout.trimEnd().split('\n').at(-1) as string;
    assert.match(logged, / converge box: refused: the preview changed since digest /);

    const status = await world.berth('status', 'box');
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /\n {2}managed: svc \(by converge, since \S+, a reload is owed: the next converge runs it\)\n/,
    );
    const json = JSON.parse((await world.berth('status', 'box', '--json')).stdout);
    assert.deepEqual(json.nodes[0].managed.svc.pending, ['reload']);
  });

  it('says that a module without reload takes the change at its next start', async () => {
    const { reload: _, ...noReload } = SVC;
    await world.writeModule('svc', {
      ...noReload,
      files: { '/etc/svc/a.conf': { content: 'x\n' } },
    });
    const { preview, said } = await act(world, 'converge', 'box');
    assert.match(preview, /\n {2}no reload: the change is live at the next start\n/);
    assert.match(said, /no reload for svc: the change is live at its next start/);
    assert.equal(await reloads(world), '(none)');
  });

  it('plans a start for a module whose check fails, with its exit and last line, and starts it', async () => {
    await rm(join(world.root, 'running'));
    const { preview } = await act(world, 'converge', 'box');
    assert.match(
      preview,
      /update svc:\n {2}start svc: its check fails \(exit 3: not running at all\); run start: touch/,
    );
    assert.equal(await readFile(join(world.root, 'running'), 'utf8'), '');
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /nothing to do/);
  });

  it('covers the outcome of each check with the digest', async () => {
    const preview = await world.berth('converge', 'box');
    await rm(join(world.root, 'running'));
    const done = await actOnPreview(world, preview);
    assert.equal(done.code, 1);
    assert.match(
      done.stderr,
      /the preview changed since digest \S+: the check of svc now fails \(exit 3\)/,
    );
  });

  it("berth status NODE --check shows each managed module's check as it is now", async () => {
    const passing = await world.berth('status', 'box', '--check');
    assert.equal(passing.code, 0, passing.stderr);
    assert.match(passing.stdout, /\n {2}check svc: passes\n$/);
    await rm(join(world.root, 'running'));
    const failing = await world.berth('status', 'box', '--check');
    assert.match(failing.stdout, /\n {2}check svc: fails \(exit 3: not running at all\)\n$/);
    assert.equal(failing.code, 1, 'a check that fails is exit 1');
    const json = await world.berth('status', 'box', '--check', '--json');
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).format_version, 1);
    assert.deepEqual(JSON.parse(json.stdout).nodes[0].checks, {
      svc: { code: 3, last: 'not running at all' },
    });
    // A script reads why it exits 1 from the code, for a node and for a target alike.
    assert.equal(JSON.parse(json.stdout).code, 'check_failed');
    const group = await world.berth('status', '@all', '--check', '--json');
    assert.equal(group.code, 1);
    assert.equal(JSON.parse(group.stdout).code, 'check_failed');
    const without = await world.berth('status', 'box');
    assert.doesNotMatch(without.stdout, /check svc/);
    await world.writeSettings({ nodes: { box: { root: join(world.root, 'gone') } } });
    const unreachable = await world.berth('status', 'box', '--check');
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^a check could not be run: its root \S+ does not exist\n$/);
    await world.writeSettings({ nodes: { box: { root: world.root } } });
    const all = await world.berth('status', '--check');
    assert.equal(all.code, 1);
    assert.match(all.stderr, /berth status TARGET --check/);
  });

  it('a take of a module whose check fails takes it as not started, and converge starts it', async () => {
    const fresh = await makeWorld({ svc: SVC });
    try {
      await fresh.onBox('/etc/svc/a.conf', 'a=1\n');
      await fresh.onBox('/var/lib/svc/db', 'rows');
      assert.equal((await fresh.berth('adopt', 'box')).code, 0);
      const take = await act(fresh, 'take', 'box', 'svc');
      assert.match(
        take.preview,
        /check: fails \(exit 3: not running at all\), so svc is taken as not started/,
      );
      assert.match(take.said, /not yet started/);
      const converge = await act(fresh, 'converge', 'box');
      assert.match(converge.preview, /run start: touch/);
      assert.equal(await readFile(join(fresh.root, 'running'), 'utf8'), '');
    } finally {
      await fresh.cleanup();
    }
  });
});

describe('hook output', () => {
  let world: World;
  const TALKER = {
    secrets: { token: { path: '/etc/talker/token' } },
    start:
      'echo "starting talker"; echo "token is $(cat "$BERTH_ROOT/etc/talker/token")"; for i in 1 2 3 4 5 6; do echo "line $i"; done',
  };
  beforeEach(async () => {
    world = await makeWorld({ talker: TALKER });
    assert.equal((await world.berth('assign', 'box', 'talker')).code, 0);
  });
  afterEach(() => world.cleanup());

  it('streams on the command line as it comes, cleared of secrets, and keeps its last lines in the journal', async () => {
    const { said } = await act(world, 'converge', 'box');
    const token = (await readFile(join(world.root, '/etc/talker/token'), 'utf8')).trim();
    assert.doesNotMatch(said, new RegExp(token));
    const lines = said.trim().split('\n');
    const running = lines.indexOf('running start of talker …');
    assert.ok(running >= 0, said);
    assert.deepEqual(lines.slice(running, running + 10), [
      'running start of talker …',
      '  starting talker',
      '  token is [secret token of talker]',
      '  line 1',
      '  line 2',
      '  line 3',
      '  line 4',
      '  line 5',
      '  line 6',
      'ran start of talker',
    ]);
    // Streamed once: said's copy of the last lines is not printed again.
    assert.doesNotMatch(said, / {2}> /);
    const entry = (await world.journal()).at(-1) as { said: string };
    assert.match(
      entry.said,
      /ran start of talker\n {2}> line 2\n {2}> line 3\n {2}> line 4\n {2}> line 5\n {2}> line 6\n/,
    );
    assert.doesNotMatch(JSON.stringify(await world.journal()), new RegExp(token));
    // --json answers as the API does: said with the last lines, nothing streamed.
    await world.writeModule('talker', { ...TALKER, stop: 'echo "stopping talker"' });
    assert.equal((await world.berth('unassign', 'box', 'talker')).code, 0);
    const preview = await world.berth('converge', 'box');
    const json = await world.berth(
      'converge',
      'box',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
      '--json',
    );
    assert.equal(JSON.parse(json.stdout).said.split('\n')[0], 'ran stop of talker');
    assert.match(JSON.parse(json.stdout).said, /^ran stop of talker\n {2}> stopping talker\n/);
  });
});
