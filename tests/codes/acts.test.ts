/**
 * The codes of an act that met its node — a lock another act holds, stores that cannot be
 * read, a machine not reached or not understood, a hook or a step that failed, a journal
 * that could not record, a batch not begun — on both faces, for one node and for a group.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { FILES } from '../../src/stores/file-store.ts';
import { takeLock } from '../../src/stores/lock.ts';
import { type Asked, codesSeen, type Faces, openFaces } from './faces.ts';

const run = promisify(execFile);
const codes = codesSeen('acts');

/** How long the hanging start sleeps: seconds no other test sleeps, so that ps tells its own. */
const LONG = 20_000 + (process.pid % 9_000) * 2;

/** The processes of the hanging start, as ps lists them; empty when none is left. */
async function hanging(): Promise<string> {
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .filter((line) => line.includes(`sleep ${LONG}`))
    .join('\n');
}

describe('an act that met its node', () => {
  let faces: Faces;
  let fakeBin: string;
  before(async () => {
    // An ssh that reaches the far side, whose shell does not run berth's script.
    fakeBin = join(process.env.TMPDIR ?? '/tmp', `berth-codes-ssh-${process.pid}`);
    await mkdir(fakeBin, { recursive: true });
    await writeFile(join(fakeBin, 'ssh'), '#!/bin/sh\necho "the far side says no" >&2\nexit 1\n');
    await chmod(join(fakeBin, 'ssh'), 0o755);
    faces = await openFaces({
      modules: {
        app: { description: 'an app', files: { '/etc/app/app.conf': { content: 'port 80\n' } } },
        note: { description: 'a note' },
        failing: { description: 'a start that fails', start: 'exit 3' },
        // A start that never ends, even told to: its deadline stops it, and all it started.
        hanging: {
          description: 'a start that never ends',
          start: `echo starting; trap '' TERM; sleep ${LONG} & sleep ${LONG + 1}`,
          timeout: '1s',
        },
      },
      nodes: ['web1', 'web2', 'h1', 'h2', 's1', 's2', 't1', 't2'],
      env: { PATH: `${fakeBin}:${process.env.PATH}` },
      apiFlags: ['--lock-timeout', '1s'],
    });
    const settings = JSON.parse(await readFile(join(faces.world.state, 'berth.json'), 'utf8'));
    settings.nodes.gone = { root: join(faces.world.dir, 'gone') };
    settings.nodes.far1 = { ssh: 'admin@far1.invalid' };
    settings.groups = {
      web: ['web1', 'web2'],
      hooks: ['h1', 'h2'],
      slow: ['t1', 't2'],
      steps: ['s1', 's2'],
      lost: ['web1', 'gone'],
      faraway: ['web1', 'far1'],
    };
    await faces.world.writeSettings(settings);
  });
  after(async () => {
    await faces?.close();
    await rm(fakeBin, { recursive: true, force: true });
  });

  /** The preview's digest, on the command line. */
  const digestOf = async (node: string) => {
    const preview = await faces.line('converge', { node });
    assert.equal(preview.status, 0, JSON.stringify(preview.body));
    return preview.body.digest as string;
  };
  /** The act of converge on `node`'s preview, on a face. */
  const act = async (face: 'cli' | 'api', node: string, more: Partial<Asked> = {}) => {
    const asked = { node, yes: true, digest: await digestOf(node), ...more };
    return face === 'cli' ? faces.line('converge', asked) : faces.served('converge', asked);
  };

  it("lock_timeout: another berth holds a node's lock past the wait; the words say who", async () => {
    // The acts on previews made before the lock was taken.
    const asked = {
      node: { node: 'web1', yes: true, digest: await digestOf('web1') },
      group: { node: '@web', yes: true, digest: await digestOf('@web') },
    };
    const here = join(faces.world.state, FILES.nodes, 'web1');
    await mkdir(here, { recursive: true });
    const held = await takeLock(join(here, FILES.lock), { node: 'web1', act: 'converge' }, 1_000);
    try {
      const holder = new RegExp(
        `berth process ${process.pid} on ${hostname()} holds the lock of node web1 \\(converge, since [^)]+\\)`,
      );
      for (const scope of ['node', 'group'] as const) {
        // Waiting longer than the second after which berth says whose lock it waits for:
        // a wait of 1s would race that line on a loaded machine.
        const line = await faces.line('converge', asked[scope], '--lock-timeout', '3s');
        assert.equal(line.status, 3);
        assert.equal(line.body.format_version, 1);
        codes.refused(`cli ${scope}`, line, 'lock_timeout');
        assert.match(line.body.refused ?? '', holder);
        assert.match(line.body.refused ?? '', /did not let go within 3s/);
        assert.match(line.stderr, /^waiting for the lock of web1, held by berth process /);
      }
      // berth api waits as long as its own --lock-timeout says.
      const [one, group] = await Promise.all([
        faces.served('converge', asked.node),
        faces.served('converge', asked.group),
      ]);
      for (const [scope, served] of [
        ['node', one],
        ['group', group],
      ] as const) {
        assert.equal(served.status, 503);
        codes.refused(`api ${scope}`, served, 'lock_timeout');
        assert.match(served.body.refused ?? '', holder);
        assert.match(served.body.refused ?? '', /did not let go within 1s/);
      }
    } finally {
      await held.release();
    }
    // Nothing was done: the journal of web1 holds no converge.
    const journal = await readFile(join(here, 'journal.jsonl'), 'utf8').catch(() => '');
    assert.doesNotMatch(journal, /"act":"converge"/);
  });

  it('lock_timeout: the node of a group whose lock was not had carries the code in its entry', async () => {
    const here = join(faces.world.state, FILES.nodes, 'web1');
    await mkdir(here, { recursive: true });
    const held = await takeLock(join(here, FILES.lock), { node: 'web1', act: 'converge' }, 1_000);
    try {
      for (const node of ['web1', '@web']) {
        const line = await faces.line('converge', { node }, '--lock-timeout', '1s');
        assert.equal(line.status, 3);
        assert.equal(line.body.nodes?.web1?.code, 'lock_timeout', JSON.stringify(line.body));
        assert.equal(line.body.nodes?.web1?.outcome, 'refused');
        // Nothing of the other node was begun: it is not in the answer.
        assert.equal(line.body.nodes?.web2, undefined);
        const served = await faces.served('converge', { node });
        assert.equal(served.status, 503);
        assert.equal(served.body.nodes?.web1?.code, 'lock_timeout', JSON.stringify(served.body));
      }
    } finally {
      await held.release();
    }
  });

  it("stores_unavailable: a node's record that cannot be read, exit 3 and 503", async () => {
    const record = join(faces.world.state, FILES.nodes, 'web2', 'record.json');
    await mkdir(join(record, '..'), { recursive: true });
    await writeFile(record, 'not a record');
    try {
      await codes.convergeRefusedOnBoth(faces, 'web2', {
        exit: 3,
        status: 503,
        code: 'stores_unavailable',
      });
    } finally {
      await rm(record);
    }
  });

  it('unreachable: a node whose root is not there', async () => {
    for (const [face, ask] of [
      ['cli', faces.line],
      ['api', faces.served],
    ] as const) {
      codes.refused(`${face} node`, await ask('converge', { node: 'gone' }), 'unreachable', [
        'gone',
      ]);
      const group = await ask('converge', { node: '@lost' });
      codes.refused(`${face} group`, group, 'unreachable', ['gone']);
      assert.equal(group.body.nodes?.web1?.outcome, 'previewed');
    }
  });

  it('failed: the machine answered what berth did not foresee (its shell did not run the script)', async () => {
    for (const [face, ask] of [
      ['cli', faces.line],
      ['api', faces.served],
    ] as const) {
      const one = await ask('converge', { node: 'far1' });
      codes.refused(`${face} node`, one, 'failed', ['far1']);
      assert.match(one.body.refused ?? '', /the far side says no/);
      codes.refused(`${face} group`, await ask('converge', { node: '@faraway' }), 'failed', [
        'far1',
      ]);
    }
  });

  it('hook_failed, and not_begun: the nodes of the batches after a node failed', async () => {
    assert.equal((await faces.world.berth('assign', '@hooks', 'failing')).code, 0);
    for (const face of ['cli', 'api'] as const) {
      codes.refused(`${face} node`, await act(face, 'h1'), 'hook_failed', ['h1']);
      codes.refused(`${face} group`, await act(face, '@hooks'), 'hook_failed', ['h1', 'h2']);
      const batched = await act(face, '@hooks', { batch: 1 });
      codes.nodeRefused(`${face} group`, batched, 'h1', 'hook_failed');
      codes.nodeRefused(`${face} group`, batched, 'h2', 'not_begun');
    }
  });

  it("hook_timeout: a start that never ends fails the act in its deadline's words; nothing of it stays", async () => {
    assert.equal((await faces.world.berth('assign', '@slow', 'hanging')).code, 0);
    const said =
      /start of hanging did not end within its timeout of 1s, so berth stopped it and all it started: starting/;
    for (const face of ['cli', 'api'] as const) {
      const one = await act(face, 't1');
      codes.refused(`${face} node`, one, 'hook_timeout', ['t1']);
      assert.match(one.body.refused ?? '', said);
      const group = await act(face, '@slow');
      codes.refused(`${face} group`, group, 'hook_timeout', ['t1', 't2']);
      assert.match(group.body.refused ?? '', said);
    }
    assert.equal(await hanging(), '', 'nothing the start began is left running');
  });

  it('step_failed: a file berth cannot write, where a file stands for its directory', async () => {
    assert.equal((await faces.world.berth('assign', '@steps', 'app')).code, 0);
    for (const node of ['s1', 's2']) await writeFile(join(faces.rootOf(node), 'etc'), 'a file\n');
    for (const face of ['cli', 'api'] as const) {
      codes.refused(`${face} node`, await act(face, 's1'), 'step_failed', ['s1']);
      codes.refused(`${face} group`, await act(face, '@steps'), 'step_failed', ['s1', 's2']);
    }
  });

  it('refresh_failed: --refresh on a node with no package lists of its own', async () => {
    for (const [scope, node] of [
      ['node', 'web1'],
      ['group', '@web'],
    ] as const) {
      const line = await faces.line('converge', { node }, '--refresh');
      assert.equal(line.status, 1);
      codes.refused(`cli ${scope}`, line, 'refresh_failed', ['web1']);
    }
  });

  it('journal_failed: the act was done, and the journal could not record it', async () => {
    for (const node of ['web1', 'web2']) {
      const journal = join(faces.world.state, FILES.nodes, node, 'journal.jsonl');
      await rm(journal, { force: true });
      await mkdir(journal, { recursive: true });
    }
    // Each an assignment not made before: a module a node, a face.
    const asked = [
      ['cli node', 'web1', 'note', faces.line],
      ['cli group', '@web', 'app', faces.line],
      ['api node', 'web2', 'note', faces.served],
      ['api group', '@web', 'failing', faces.served],
    ] as const;
    for (const [cell, node, module, ask] of asked) {
      const answer = await ask('assign', { node, module });
      const nodes = node === '@web' ? ['web1', 'web2'] : [node];
      codes.refused(cell, answer, 'journal_failed', nodes);
      assert.match(answer.body.refused ?? '', /was done, but the journal could not record it/);
    }
  });
});

codes.finally();
