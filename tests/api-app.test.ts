import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { locateState } from '../src/config/state-dir.ts';
import { fileStores } from '../src/stores/file-store.ts';
import { type App, appOver, post } from './helpers/api.ts';
import { untimed } from './helpers/timed.ts';
import { makeWorld, POSTGRES, runBerth, type World } from './helpers/world.ts';

/**
 * The app as `berth api` builds it over a real state directory, in process: what only
 * the file stores meet. The API's every status and word is the shared suite's
 * (tests/core/api-suite.ts), run over the core and over the served binary.
 */
describe('the Command API over a state directory, in process', () => {
  let world: World;
  let app: App;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    app = appOver(world.state);
  });
  after(() => world.cleanup());

  it('a corrupt state.json is 503 naming the file, and the file is left as it was', async () => {
    await writeFile(join(world.state, 'state.json'), '{"assignments": ');
    try {
      const answer = await post(app, '/assign', { node: 'box', module: 'postgres' });
      assert.equal(answer.status, 503);
      assert.equal(answer.body?.code, 'stores_unavailable');
      const refused = String(answer.body?.refused);
      assert.ok(refused.startsWith('the stores cannot be opened: '), refused);
      assert.ok(refused.includes('state.json'), refused);
      assert.equal(await readFile(join(world.state, 'state.json'), 'utf8'), '{"assignments": ');
    } finally {
      await rm(join(world.state, 'state.json'));
    }
  });

  it('an act the journal cannot record is 409 with what was said, and words saying it was done but not journaled', async () => {
    const stores = fileStores(locateState(world.state));
    const unjournaled = appOver(world.state, {
      stores: {
        ...stores,
        async openNode(node, act) {
          const opened = await stores.openNode(node, act);
          return {
            ...opened,
            journal: async () => {
              throw new Error('no space left on device');
            },
          };
        },
      },
    });
    const answer = await post(unjournaled, '/assign', { node: 'box', module: 'postgres' });
    assert.equal(answer.status, 409);
    assert.deepEqual(untimed(answer.body), {
      format_version: 1,
      said: 'box is to run postgres',
      refused: 'assign was done, but the journal could not record it: no space left on device',
      code: 'journal_failed',
      nodes: { box: { steps: [], blockers: [], outcome: 'refused', code: 'journal_failed' } },
    });
    assert.deepEqual((await world.readState()).assignments, { box: ['postgres'] });
    assert.deepEqual(await world.journal(), []);
  });
});

describe('the same words on the command line and over the API', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
  });
  after(() => world.cleanup());

  const situations = [
    {
      what: 'a node berth does not know',
      route: '/assign',
      body: { node: 'nowhere', module: 'postgres' },
      argv: ['assign', 'nowhere', 'postgres'],
    },
    {
      what: 'a module name that breaks the rule',
      route: '/assign',
      body: { node: 'box', module: 'Post_gres' },
      argv: ['assign', 'box', 'Post_gres'],
    },
    {
      what: 'an unassign of what is not assigned',
      route: '/unassign',
      body: { node: 'box', module: 'postgres' },
      argv: ['unassign', 'box', 'postgres'],
    },
    {
      what: 'a take before any adopt',
      route: '/take',
      body: { node: 'box', module: 'postgres' },
      argv: ['take', 'box', 'postgres'],
    },
    {
      what: 'a converge of a node berth does not know',
      route: '/converge',
      body: { node: 'nowhere' },
      argv: ['converge', 'nowhere'],
    },
  ];
  for (const { what, route, body, argv } of situations) {
    it(`${what}: 409 over the API, exit 1 on the command line, one refusal`, async () => {
      const api = await post(appOver(world.state), route, body);
      const cli = await world.berth(...argv);
      assert.equal(api.status, 409);
      assert.equal(cli.code, 1);
      assert.equal(cli.stderr, `${api.body?.refused}\n`);
      assert.equal(cli.stdout, api.body?.said === '' ? '' : `${api.body?.said}\n`);
    });
  }

  it('an assignment kept that does not resolve says and refuses the same on both faces', async () => {
    const api = await post(appOver(world.state), '/assign', { node: 'box', module: 'gitea' });
    assert.equal(api.status, 409);
    const unassigned = await post(appOver(world.state), '/unassign', {
      node: 'box',
      module: 'gitea',
    });
    assert.equal(unassigned.status, 200);
    const cli = await world.berth('assign', 'box', 'gitea');
    assert.equal(cli.code, 1);
    assert.equal(cli.stdout, `${api.body?.said}\n`);
    assert.equal(cli.stderr, `${api.body?.refused}\n`);
  });

  it('a missing module: 400 over the API, exit 2 on the command line, the same words', async () => {
    const api = await post(appOver(world.state), '/assign', { node: 'box' });
    const cli = await world.berth('assign', 'box');
    assert.equal(api.status, 400);
    assert.equal(cli.code, 2);
    assert.equal(cli.stderr, `${api.body?.refused}\n`);
  });

  it('stores that cannot be opened: 503 over the API, exit 3 on the command line, the same words', async () => {
    const missing = join(world.dir, 'mistyped');
    const api = await post(appOver(missing), '/adopt', { node: 'box' });
    const cli = await runBerth(['--state', missing, 'adopt', 'box']);
    assert.equal(api.status, 503);
    assert.equal(cli.code, 3);
    assert.equal(cli.stderr, `${api.body?.refused}\n`);
  });
});
