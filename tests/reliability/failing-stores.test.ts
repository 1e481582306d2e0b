/**
 * Stores that fail: a state directory that is missing, not a directory, read-only,
 * holding a corrupt file, or locked by another live process gets 503 over the API
 * and exit 3 on the command line, in words that say which, and nothing is left
 * half-written.
 *
 * Tests run as root, which chmod does not stop; read-only is made two ways: berth run
 * as an unprivileged user (setpriv), and a read-only bind mount in a mount namespace
 * of its own (unshare -m). Where the machine allows neither, those cases are skipped.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { visible } from '../../src/cli/visible.ts';
import {
  inProcessServer,
  PLAIN,
  post,
  servingPort,
  snapshot,
  start,
  TEST_SERVER,
} from '../helpers/reliability.ts';
import { BERTH, makeWorld, runBerth, type World } from '../helpers/world.ts';

function works(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

const ASSIGN = JSON.stringify({ node: 'box', module: 'm' });

/** The acts that read each of a node's records: the vault and previews are read only when used. */
const ACTS = {
  assign: { path: '/assign', body: ASSIGN, args: ['assign', 'box', 'm'] },
  adopt: { path: '/adopt', body: JSON.stringify({ node: 'box' }), args: ['adopt', 'box'] },
  converge: { path: '/converge', body: JSON.stringify({ node: 'box' }), args: ['converge', 'box'] },
  /** An act on a digest not of this preview: it reads the kept preview of that digest. */
  'converge on an earlier digest': {
    path: '/converge',
    body: JSON.stringify({ node: 'box', yes: true, digest: 'a'.repeat(64) }),
    args: ['converge', 'box', '--yes', '--digest', 'a'.repeat(64)],
  },
} as const;

/** The same act over the API (in this process) and on the command line, against `state`. */
async function bothFaces(state: string, act: keyof typeof ACTS = 'assign') {
  const { path, body, args } = ACTS[act];
  const server = await inProcessServer(state);
  try {
    const answer = await post(server.port, path, body);
    const cli = await runBerth(['--state', state, ...args]);
    return { answer, refused: JSON.parse(answer.body).refused as string, cli };
  } finally {
    await server.close();
  }
}

function assertStoreFailure(result: Awaited<ReturnType<typeof bothFaces>>, words: RegExp) {
  assert.equal(result.answer.status, 503, result.answer.raw);
  assert.match(result.refused, /^the stores cannot be opened: /);
  assert.match(result.refused, words);
  assert.equal(result.cli.code, 3, result.cli.stderr);
  // The command line also says it waits for a lock, after a second, on a line before.
  const refusal = result.cli.stderr.replace(/^waiting for the lock of .*\n/, '');
  // At a terminal a control character in them (a corrupt file's bytes) shows as an escape.
  assert.equal(refusal.trim(), visible(result.refused), 'the same words on both faces');
}

describe('stores that fail', { concurrency: true }, () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ m: PLAIN });
    assert.equal((await world.berth('assign', 'box', 'other')).code, 1);
  });
  after(() => world.cleanup());

  /** A copy of the state of its own, so that the cases can run at once. */
  async function copy(name: string) {
    const dir = join(world.dir, name);
    await mkdir(dir);
    execFileSync('cp', ['-a', `${world.state}/.`, dir]);
    return dir;
  }

  it('a state directory that is missing', async () => {
    const missing = join(world.dir, 'no-such-state');
    assertStoreFailure(await bothFaces(missing), /the state directory \S+ does not exist/);
  });

  it('a state directory that is not a directory', async () => {
    const file = join(world.dir, 'a-file');
    await writeFile(file, 'not a directory');
    assertStoreFailure(await bothFaces(file), /the state directory \S+ is not a directory/);
  });

  for (const [name, content, act, words] of [
    ['record.json', '{"assigned":', 'assign', /record\.json is not valid JSON/],
    ['record.json', '{"assigned":7}', 'assign', /record\.json is not valid: assigned/],
    ['vault.json', '[]', 'adopt', /vault\.json is not valid/],
  ] as const) {
    it(`a corrupt ${name} of a node, met by ${act}: ${JSON.stringify(content)}`, async () => {
      const state = await copy(`corrupt-${name}-${content.length}`);
      await writeFile(join(state, 'nodes', 'box', name), content, { mode: 0o600 });
      const before = await snapshot(state);
      assertStoreFailure(await bothFaces(state, act), words);
      assert.deepEqual(await snapshot(state), before, 'nothing written, nothing half-written');
    });
  }

  it('a corrupt kept preview of a node, met by an act naming its digest', async () => {
    const state = await copy('corrupt-preview');
    const kept = join('nodes', 'box', 'previews', `000000000001.${'a'.repeat(64)}.json`);
    await mkdir(join(state, 'nodes', 'box', 'previews'), { recursive: true, mode: 0o700 });
    await writeFile(join(state, kept), '\u0000\u0001', { mode: 0o600 });
    const before = await snapshot(state);
    assertStoreFailure(
      await bothFaces(state, 'converge on an earlier digest'),
      /000000000001\.a{64}\.json is not valid JSON/,
    );
    assert.deepEqual(await snapshot(state), before, 'nothing written, nothing half-written');
  });

  it("a berth.json that is not valid is the command's refusal (409, exit 1), and nothing is written", async () => {
    const state = await copy('corrupt-berth-json');
    await writeFile(join(state, 'berth.json'), '{"nodes": 7}');
    const before = await snapshot(state);
    const result = await bothFaces(state);
    assert.equal(result.answer.status, 409, result.answer.raw);
    assert.match(result.refused, /berth\.json is not valid: nodes/);
    assert.equal(result.cli.code, 1, result.cli.stderr);
    // The command line also says it waits for a lock, after a second, on a line before.
    const refusal = result.cli.stderr.replace(/^waiting for the lock of .*\n/, '');
    assert.equal(refusal.trim(), result.refused, 'the same words on both faces');
    assert.deepEqual(await snapshot(state), before);
  });

  for (const [name, content] of [
    ['a value where a record belongs', '{"key":"S3CRETKEY","secrets":{"box/m/pw":"S3CRETVALUE"}}'],
    [
      'a value without its quotes',
      '{"key":"S3CRETKEY","secrets":{"box/m/pw":{"value":S3CRETVALUE}}}',
    ],
    ['a key that is not text', '{"key":["S3CRETKEY"],"secrets":{}}'],
  ] as const) {
    it(`a corrupt vault.json (${name}) is refused without quoting a secret`, async () => {
      const state = await copy(`corrupt-vault-${name.replaceAll(' ', '-')}`);
      await writeFile(join(state, 'nodes', 'box', 'vault.json'), content, { mode: 0o600 });
      const result = await bothFaces(state, 'adopt');
      assertStoreFailure(result, /vault\.json is not valid/);
      assert.doesNotMatch(result.refused, /S3CRET/);
      assert.doesNotMatch(result.cli.stderr, /S3CRET/);
    });
  }

  it('locked by another live process: waits 10 s, then says who holds it', async () => {
    const holder = start('sleep', ['60']);
    try {
      const state = await copy('locked');
      const lock = JSON.stringify({
        pid: holder.child.pid,
        host: hostname(),
        act: 'converge',
        node: 'box',
        since: '2026-11-21T07:00:00.000Z',
        nonce: 'n',
      });
      await writeFile(join(state, 'nodes', 'box', 'lock'), lock);
      const before = await snapshot(state);
      const result = await bothFaces(state);
      assertStoreFailure(
        result,
        new RegExp(
          `berth process ${holder.child.pid} on \\S+ holds the lock of node box \\(converge, since 2026-11-21T07:00:00.000Z\\) and did not let go within 10s`,
        ),
      );
      const after = await snapshot(state);
      assert.deepEqual(after, before, 'the holder keeps its lock; nothing else was written');
    } finally {
      holder.child.kill('SIGKILL');
    }
  });

  const canSetpriv = works('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'true']);
  it('a state directory berth may not write (an unprivileged user)', {
    skip: canSetpriv ? false : 'setpriv cannot run a command as another user here',
  }, async () => {
    // Readable by everyone, writable by root alone.
    const state = await copy('not-writable');
    await chmod(world.dir, 0o755);
    await chmod(state, 0o755);
    for (const name of await readdir(state))
      if (name !== 'vault.json') await chmod(join(state, name), 0o755);
    const before = await snapshot(state);
    const run = await runUnprivileged(['--state', state, 'assign', 'box', 'm']);
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stderr,
      /^the stores cannot be opened: berth cannot read and write the state directory \S+: permission denied/,
    );
    assert.deepEqual(await snapshot(state), before);
  });

  const canMount = works('unshare', [
    '-m',
    'sh',
    '-c',
    'mount --bind -o ro / / 2>/dev/null || mount --bind -o ro /tmp /tmp',
  ]);
  it('a read-only state directory (a read-only mount), over the API and the command line', {
    skip: canMount ? false : 'this machine does not allow a mount namespace (unshare -m)',
  }, async () => {
    const state = await copy('read-only');
    const before = await snapshot(state);
    const readOnly = (command: string[]) => [
      '-m',
      'sh',
      '-c',
      `mount --bind -o ro "$0" "$0" && exec "$@"`,
      state,
      ...command,
    ];
    const cli = start(
      'unshare',
      readOnly([process.execPath, BERTH, '--state', state, 'assign', 'box', 'm']),
    );
    assert.equal((await cli.exited).code, 3, cli.stderr());
    assert.match(
      cli.stderr(),
      /^the stores cannot be opened: berth cannot read and write the state directory \S+: it is on a read-only file system/,
    );
    const server = start(
      'unshare',
      readOnly([process.execPath, '--import', 'tsx', TEST_SERVER, state]),
    );
    try {
      const port = await servingPort(server);
      const answer = await post(port, '/assign', ASSIGN);
      assert.equal(answer.status, 503, answer.raw);
      assert.equal(JSON.parse(answer.body).refused, cli.stderr().trim());
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    assert.deepEqual(await snapshot(state), before);
  });
});

function runUnprivileged(args: string[]) {
  const run = start('setpriv', [
    '--reuid=65534',
    '--regid=65534',
    '--clear-groups',
    process.execPath,
    BERTH,
    ...args,
  ]);
  return run.exited.then((end) => ({ code: end.code, stdout: run.stdout(), stderr: run.stderr() }));
}
