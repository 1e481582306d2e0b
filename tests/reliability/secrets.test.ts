/**
 * Secrets: after a full adopt / take / converge cycle, on the command line and over
 * the API, no secret value appears in any output, error, journal line, log line or
 * state file other than the vault; every secret file and the vault are mode 0600.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { vaultPath } from '../commands/support.ts';
import { post, startTestServer } from '../helpers/reliability.ts';
import { digestOf, GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';
import { opened, userIdentityFile } from '../vault/opened.ts';

describe('secrets through a whole cycle', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    await world.writeModule('cache', {
      description: 'a module whose start fails, so that an error is said too',
      secrets: { key: { path: '/etc/cache/key' } },
      start: 'echo "cache will not start"; exit 3',
    });
  });
  after(() => world.cleanup());

  it('shows no secret value anywhere but the vault, and keeps them 0600', async (t) => {
    const handPlaced = `hand-${randomBytes(12).toString('hex')}`;
    await world.onBox('/var/lib/gitea/repo', 'data');
    await world.onBox('/etc/gitea/db_password', `${handPlaced}\n`);
    await chmod(join(world.root, 'etc/gitea/db_password'), 0o600);

    const said: string[] = [];
    const cli = async (...args: string[]) => {
      const run = await world.berth(...args);
      said.push(run.stdout, run.stderr);
      return run;
    };
    const server = await startTestServer(world.state);
    // A failed assertion must not leave the server holding the test run open.
    t.after(() => server.child.kill('SIGKILL'));
    const api = async (route: string, body: object) => {
      const answer = await post(server.port, route, JSON.stringify(body));
      said.push(answer.raw);
      return answer;
    };

    assert.equal((await cli('adopt', 'box')).code, 0);
    const preview = await cli('take', 'box', 'gitea', '--mint', 'admin_token');
    const take = await cli(
      'take',
      'box',
      'gitea',
      '--yes',
      '--digest',
      digestOf(preview.stdout),
      '--mint',
      'admin_token',
    );
    assert.equal(take.code, 0, take.stderr);
    assert.equal((await api('/assign', { node: 'box', module: 'postgres' })).status, 200);
    const plan = await api('/converge', { node: 'box' });
    const digest = digestOf(JSON.parse(plan.body).said);
    const act = await api('/converge', { node: 'box', yes: true, digest });
    assert.equal(act.status, 200, act.raw);
    // An act that fails after minting: its error is said and journaled too.
    assert.equal((await cli('assign', 'box', 'cache')).code, 0);
    const failing = await cli('converge', 'box', '--filter', 'cache');
    const failed = await api('/converge', {
      node: 'box',
      filter: 'cache',
      yes: true,
      digest: digestOf(failing.stdout),
    });
    assert.equal(failed.status, 409, failed.raw);
    assert.match(JSON.parse(failed.body).refused, /start of cache failed/);
    // Refused takes and converges say what changed, from kept previews.
    await world.onBox('/etc/postgres/password', 'moved-aside-by-hand');
    await api('/converge', { node: 'box', yes: true, digest });
    await cli('adopt', 'box');
    for (const args of [['log'], ['log', '--json'], ['status'], ['status', '--json']])
      assert.equal((await cli(...args)).code, 0);
    server.child.kill('SIGTERM');
    await server.exited;
    said.push(server.stdout(), server.stderr());

    // The values: the hand-placed one, and every one berth minted (from the vault, opened
    // with the identity berth found as this user).
    const vault = JSON.parse(await readFile(vaultPath(world), 'utf8'));
    const open = async (sealed: string) =>
      (await opened(sealed, userIdentityFile())) ?? Buffer.alloc(0);
    const values = await Promise.all(
      Object.values(vault.secrets as Record<string, { value: string }>).map((entry) =>
        open(entry.value),
      ),
    );
    assert.ok(values.length >= 4, `the vault holds ${values.length} secrets`);
    assert.ok(values.some((value) => value.toString().includes(handPlaced)));
    const needles = values.flatMap((value) => {
      const text = value.toString('utf8').trim();
      return [text, value.toString('base64'), Buffer.from(text).toString('base64')];
    });
    needles.push((await open(vault.key)).toString('base64'));

    const places: [string, string][] = said.map((text, index) => [`output ${index}`, text]);
    for (const name of await readdir(world.state, { recursive: true })) {
      const full = join(world.state, name);
      if (name.endsWith('vault.json') || !(await stat(full)).isFile()) continue;
      places.push([name, await readFile(full, 'utf8')]);
    }
    for (const [where, text] of places)
      for (const needle of needles)
        assert.ok(!text.includes(needle), `a secret value appears in ${where}`);

    const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);
    assert.equal(await mode(vaultPath(world)), '600');
    for (const path of [
      'etc/gitea/db_password',
      'etc/gitea/admin_token',
      'etc/postgres/password',
      'etc/cache/key',
    ])
      assert.equal(await mode(join(world.root, path)), '600', path);
    for (const name of await readdir(world.state))
      assert.ok(!name.endsWith('.tmp'), `${name} is left behind`);
  });
});
