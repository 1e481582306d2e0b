import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BERTH, GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { convergeBox } from './support.ts';

describe('berth status and berth log', () => {
  let world: World;
  const user = userInfo().username;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    await world.writeSettings({
      nodes: { box: { root: world.root }, web1: { ssh: 'admin@web1.lan' } },
    });
  });
  after(() => world.cleanup());

  it('says the journal is empty before any act', async () => {
    const run = await world.berth('log');
    assert.deepEqual(run, { code: 0, stdout: 'the journal is empty: no act yet\n', stderr: '' });
    assert.deepEqual(await world.berth('log', '--json'), { code: 0, stdout: '', stderr: '' });
  });

  it('shows every node with what it is to run, what berth manages and its account', async () => {
    await world.berth('assign', 'box', 'postgres');
    assert.equal((await convergeBox(world)).code, 0);
    await world.berth('unassign', 'box', 'postgres');
    await world.berth('assign', 'box', 'gitea');

    const run = await world.berth('status');
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines[0], `box (root ${world.root})`);
    assert.equal(lines[1], '  to run: gitea');
    assert.match(lines[2] ?? '', /^ {2}managed: postgres \(by converge, since \S+\)$/);
    assert.deepEqual(lines.slice(3), [
      '  account: none yet (berth adopt to take one)',
      '  gitea does not resolve: it needs postgres, which box is not assigned',
      'web1 (ssh admin@web1.lan)',
      '  to run: nothing',
      '  managed: nothing',
      '  account: none yet (berth adopt to take one)',
    ]);
  });

  it('shows one node, and the account once adopted', async () => {
    await world.berth('adopt', 'box');
    const run = await world.berth('status', 'box');
    assert.equal(run.code, 0);
    assert.doesNotMatch(run.stdout, /web1/);
    assert.match(run.stdout, /\n {2}account: taken \S+ \(\d+s ago\)\n/);
  });

  it('gives the same facts as JSON', async () => {
    const run = await world.berth('status', 'box', '--json');
    assert.equal(run.code, 0);
    const { nodes } = JSON.parse(run.stdout);
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0].node, 'box');
    assert.deepEqual(nodes[0].machine, { root: world.root });
    assert.deepEqual(nodes[0].assigned, ['gitea']);
    assert.deepEqual(Object.keys(nodes[0].managed), ['postgres']);
    assert.match(nodes[0].account.takenAt, /^\d{4}-/);
    assert.equal(
      nodes[0].unresolved.gitea,
      'gitea does not resolve: it needs postgres, which box is not assigned',
    );
  });

  it('journals every act, refused or done, with the OS user, and no preview', async () => {
    await world.berth('take', 'box', 'gitea');
    await world.berth('converge', 'box');
    await world.berth('unassign', 'box', 'redis');

    const run = await world.berth('log');
    assert.equal(run.code, 0);
    const lines = run.stdout.trimEnd().split('\n');
    const at = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
    const expected = [
      'assign box postgres: done',
      'converge box: done \\(digest [0-9a-f]{12}\\)',
      'unassign box postgres: done',
      'assign box gitea: refused: gitea does not resolve: it needs postgres, which box is not assigned',
      'adopt box: done',
      'unassign box redis: refused: box is not to run redis; there is nothing to unassign',
    ];
    assert.equal(lines.length, expected.length, run.stdout);
    expected.forEach((what, index) => {
      assert.match(lines[index] ?? '', new RegExp(`^${at} ${user} \\(cli\\) ${what}$`));
    });

    const json = await world.berth('log', '--json');
    const entries = json.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      entries.map((entry) => [entry.actor, entry.via, entry.act, entry.outcome]),
      expected.map((what) => [
        user,
        'cli',
        what.split(' ')[0],
        what.includes('refused') ? 'refused' : 'done',
      ]),
    );
    assert.equal(entries[0].said, 'box is to run postgres');
  });

  it('refuses a status of a node it does not know', async () => {
    const run = await world.berth('status', 'web2');
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      'berth does not know node web2; did you mean web1? Else add it under nodes in berth.json\n',
    );
  });
});

describe('berth log over a journal edited by hand', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('shows a line that is not an entry for what it is, and every entry around it', async () => {
    await world.berth('assign', 'box', 'one');
    await appendFile(join(world.state, 'nodes', 'box', 'journal.jsonl'), 'not json\n');
    await world.berth('assign', 'box', 'two');
    const run = await world.berth('log');
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0] ?? '', / assign box one: refused: /);
    assert.equal(
      lines[1],
      `line 2 of ${join(world.state, 'nodes', 'box', 'journal.jsonl')} is not a journal entry: "not json"`,
    );
    assert.match(lines[2] ?? '', / assign box two: refused: /);
  });

  it('shows a line that is JSON but not an entry (null, a number, an array) instead of crashing', async () => {
    const journal = join(world.state, 'nodes', 'box', 'journal.jsonl');
    await appendFile(journal, 'null\n42\n[]\n{"at":"x"}\n');
    const run = await world.berth('log');
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /TypeError/);
    const lines = run.stdout.trimEnd().split('\n').slice(-4);
    assert.deepEqual(
      lines,
      ['null', '42', '[]', '{"at":"x"}'].map(
        (text, index) =>
          `line ${index + 4} of ${journal} is not a journal entry: ${JSON.stringify(text)}`,
      ),
    );
  });
});

describe('berth log into a slow reader, or one that goes away', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
    const entry = JSON.stringify({
      at: '2026-11-20T00:00:00.000Z',
      actor: 'root',
      via: 'cli',
      act: 'assign',
      node: 'box',
      module: 'postgres',
      outcome: 'done',
      said: 'box is to run postgres',
    });
    // Far more than a pipe holds, so berth is still writing when its reader stops or has gone.
    await writeFile(join(world.state, 'journal.jsonl'), `${entry}\n`.repeat(20_000));
  });
  after(() => world.cleanup());

  it('ends quietly when the reader closes early (berth log | head -n 1)', async () => {
    const errors = join(world.dir, 'log-stderr');
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    const first = execFileSync(
      'sh',
      [
        '-c',
        `"${process.execPath}" "${BERTH}" --state "${world.state}" log 2>"${errors}" | head -n 1`,
      ],
      { env, encoding: 'utf8' },
    );
    assert.match(first, /^2026-11-20T00:00:00\.000Z root \(cli\) assign box postgres: done\n$/);
    assert.equal(await readFile(errors, 'utf8'), '');
  });

  it('writes the whole of a long log into a non-blocking pipe whose reader is slow', async () => {
    // A parent may hand berth a standard output that does not block (O_NONBLOCK is on the
    // pipe, shared): once it is full, a write says EAGAIN, and berth must wait, not fail.
    const fifo = join(world.dir, 'slow-reader');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    const child = spawn(process.execPath, [BERTH, '--state', world.state, 'log'], {
      stdio: ['ignore', writer, 'pipe'],
      env,
    });
    closeSync(writer);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(65_536);
    for (;;) {
      let read: number;
      try {
        read = readSync(reader, buffer);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        read = -1;
      }
      if (read === 0) break;
      if (read > 0) chunks.push(Buffer.from(buffer.subarray(0, read)));
      await new Promise((resume) => setTimeout(resume, 20));
    }
    closeSync(reader);
    assert.equal(await exited, 0, stderr);
    assert.equal(stderr, '');
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    assert.equal(lines.pop(), '');
    assert.equal(lines.length, 20_000);
    assert.ok(lines.every((line) => line === lines[0]));
  });
});
