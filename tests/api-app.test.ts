import assert from 'node:assert/strict';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { locateState } from '../src/config/state-dir.ts';
import { fileStores } from '../src/stores/file-store.ts';
import { memoryStores } from '../src/stores/memory-store.ts';
import { type App, appOver, ask, noRoute, post, REFUSED_ALL, refuseAll } from './helpers/api.ts';
import { untimed } from './helpers/timed.ts';
import {
  acceptAs,
  digestOf,
  GITEA,
  makeWorld,
  POSTGRES,
  runBerth,
  type World,
} from './helpers/world.ts';

const NOT_UNDERSTOOD = 'this is not a request berth understands: ';
const BOTH_NEEDED = 'both node and module are needed';
const NODE_NEEDED = 'node is needed';
const CANNOT_OPEN = 'the stores cannot be opened: ';
const WITH_MODULE = ['/assign', '/unassign', '/take'];
const NODE_ONLY = ['/converge', '/adopt'];
const ALL_ROUTES = [...WITH_MODULE, ...NODE_ONLY];

/** What JSON.parse says about a text, which is what the decoder passes on. */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(text)} is valid JSON`);
}

describe('the Command API through app.request()', () => {
  let world: World;
  let app: App;
  let missingState: string;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    app = appOver(world.state);
    missingState = join(world.dir, 'no-such-state');
  });
  after(() => world.cleanup());

  describe('step 1: authentication comes before anything else', () => {
    let refusing: App;
    before(() => {
      refusing = appOver(world.state, { authenticator: refuseAll() });
    });

    for (const route of ALL_ROUTES) {
      it(`POST ${route} refused by the authenticator is 401 with its words and its challenge`, async () => {
        const answer = await post(refusing, route, { node: 'box', module: 'postgres' });
        assert.equal(answer.status, 401);
        assert.equal(answer.type, 'application/json');
        assert.deepEqual(answer.body, { refused: REFUSED_ALL.refused, code: 'unauthorized' });
        assert.equal(answer.headers.get('www-authenticate'), REFUSED_ALL.challenge);
      });
    }

    const unreadable: [string, string][] = [
      ['an empty body', ''],
      ['a body that is not JSON', 'node=box'],
      ['a body without the required fields', '{}'],
      ['a body over 64 KiB', JSON.stringify({ node: 'box', pad: 'x'.repeat(70 * 1024) })],
    ];
    for (const [what, body] of unreadable) {
      it(`${what} is still 401 when the caller is not authenticated`, async () => {
        const answer = await ask(refusing, 'POST', '/assign', body);
        assert.equal(answer.status, 401);
        assert.deepEqual(answer.body, { refused: REFUSED_ALL.refused, code: 'unauthorized' });
      });
    }

    it('is 401 even when the stores cannot be opened', async () => {
      const answer = await post(appOver(missingState, { authenticator: refuseAll() }), '/adopt', {
        node: 'box',
      });
      assert.equal(answer.status, 401);
    });

    it('answers 401 without reading the body: a body that never ends does not hold it', async () => {
      const endless = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
      const answer = await Promise.race([
        ask(refusing, 'POST', '/assign', endless),
        new Promise<never>((_, fail) =>
          setTimeout(() => fail(new Error('no answer within 5 s')), 5_000).unref(),
        ),
      ]);
      assert.equal(answer.status, 401);
    });

    it('a request that passes acts as the subject the authenticator returned', async () => {
      const fresh = await makeWorld();
      try {
        await fresh.writeModule('postgres', POSTGRES);
        const api = appOver(fresh.state, { authenticator: acceptAs('bob@example.org') });
        assert.equal((await post(api, '/assign', { node: 'box', module: 'postgres' })).status, 200);
        assert.deepEqual(
          (await fresh.journal()).map((entry) => [entry.actor, entry.via]),
          [['bob@example.org', 'api']],
        );
      } finally {
        await fresh.cleanup();
      }
    });
  });

  describe('step 2: decoding the body', () => {
    const notJson = ['', 'node=box', '{"node": "box",', "{'node': 'box'}"];
    for (const body of notJson) {
      it(`${JSON.stringify(body)} is 400 with the JSON parser's own message`, async () => {
        const answer = await ask(app, 'POST', '/assign', body);
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, {
          refused: NOT_UNDERSTOOD + jsonParseMessage(body),
          code: 'invalid_request',
        });
      });
    }

    it('an empty body is 400 on every route, before the required fields are checked', async () => {
      for (const route of ALL_ROUTES) {
        const answer = await ask(app, 'POST', route, '');
        assert.equal(answer.status, 400, route);
        assert.deepEqual(
          answer.body,
          { refused: NOT_UNDERSTOOD + jsonParseMessage(''), code: 'invalid_request' },
          route,
        );
      }
    });

    const wrongShape: [string, string, string][] = [
      ['a number for node', '{"node": 5, "module": "postgres"}', 'node: '],
      ['a number for module', '{"node": "box", "module": 7}', 'module: '],
      [
        'the string "true" for yes',
        '{"node": "box", "module": "postgres", "yes": "true"}',
        'yes: ',
      ],
      ['a number for digest', '{"node": "box", "module": "postgres", "digest": 1}', 'digest: '],
      ['an object for filter', '{"node": "box", "filter": {}}', 'filter: '],
    ];
    for (const [what, body, field] of wrongShape) {
      it(`${what} is 400, and the decoder's message names the field`, async () => {
        const answer = await ask(app, 'POST', '/take', body);
        assert.equal(answer.status, 400);
        const refused = String(answer.body?.refused);
        assert.ok(refused.startsWith(NOT_UNDERSTOOD + field), refused);
        assert.deepEqual(Object.keys(answer.body ?? {}), ['refused', 'code']);
      });
    }

    it('yes: "true" is refused with what was expected and what came', async () => {
      const answer = await post(app, '/take', { node: 'box', module: 'postgres', yes: 'true' });
      assert.deepEqual(answer.body, {
        refused: `${NOT_UNDERSTOOD}yes: expected true or false, got the string "true"`,
        code: 'invalid_request',
      });
    });

    const notAnObject: [string, string, RegExp][] = [
      ['null', 'null', /got null$/],
      ['a JSON array', '[]', /got a list$/],
      ['a JSON array holding a request', '[{"node": "box", "module": "postgres"}]', /got a list$/],
      ['a JSON string', '"box"', /got the string "box"$/],
      ['a JSON number', '42', /got the number 42$/],
    ];
    for (const [what, body, received] of notAnObject) {
      it(`${what} is 400: the body must be an object`, async () => {
        const answer = await ask(app, 'POST', '/assign', body);
        assert.equal(answer.status, 400);
        const refused = String(answer.body?.refused);
        assert.ok(refused.startsWith(`${NOT_UNDERSTOOD}expected an object, got `), refused);
        assert.match(refused, received);
      });
    }

    it('a body that is not UTF-8 is 400', async () => {
      const answer = await ask(app, 'POST', '/assign', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, {
        refused: `${NOT_UNDERSTOOD}the body is not UTF-8 text`,
        code: 'invalid_request',
      });
    });

    it('is checked before the required fields: a wrongly typed node is not "needed"', async () => {
      const answer = await post(app, '/assign', { node: 5 });
      assert.ok(String(answer.body?.refused).startsWith(`${NOT_UNDERSTOOD}node: `));
    });

    it('unknown extra fields are accepted and the command runs', async () => {
      const answer = await post(app, '/assign', {
        node: 'box',
        module: 'postgres',
        colour: 'blue',
        nested: { deep: [1, 2] },
      });
      assert.equal(answer.status, 200);
      assert.match(String(answer.body?.said), /^box is (already )?to run postgres/);
    });
  });

  describe('step 3: the required fields', () => {
    const withoutModule = [
      {},
      { node: 'box' },
      { module: 'postgres' },
      { node: '', module: 'postgres' },
      { node: 'box', module: '' },
      { node: '', module: '' },
    ];
    for (const route of WITH_MODULE) {
      for (const body of withoutModule) {
        it(`POST ${route} ${JSON.stringify(body)} is 400 "${BOTH_NEEDED}"`, async () => {
          const answer = await post(app, route, body);
          assert.equal(answer.status, 400);
          assert.deepEqual(answer.body, { refused: BOTH_NEEDED, code: 'fields_missing' });
        });
      }
    }
    for (const route of NODE_ONLY) {
      for (const body of [{}, { node: '' }, { module: 'postgres' }]) {
        it(`POST ${route} ${JSON.stringify(body)} is 400 "${NODE_NEEDED}"`, async () => {
          const answer = await post(app, route, body);
          assert.equal(answer.status, 400);
          assert.deepEqual(answer.body, { refused: NODE_NEEDED, code: 'fields_missing' });
        });
      }
    }

    it('are checked before the stores are opened', async () => {
      const answer = await post(appOver(missingState), '/assign', { node: 'box' });
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.body, { refused: BOTH_NEEDED, code: 'fields_missing' });
    });

    it('a name that is present but breaks the name rule is the command refusing: 409, not 400', async () => {
      const answer = await post(app, '/assign', { node: ' ', module: 'postgres' });
      assert.equal(answer.status, 409);
      assert.equal(answer.body?.said, '');
      assert.equal(answer.body?.code, 'invalid_name');
      assert.match(String(answer.body?.refused), /^" " is not a node name: /);
    });
  });

  describe('the body limit', () => {
    /** A request for `/assign box postgres` padded to exactly `bytes` bytes. */
    function paddedTo(bytes: number): string {
      const bare = JSON.stringify({ node: 'box', module: 'postgres', pad: '' });
      return JSON.stringify({
        node: 'box',
        module: 'postgres',
        pad: 'x'.repeat(bytes - bare.length),
      });
    }

    it('a body of exactly 64 KiB is read', async () => {
      const body = paddedTo(64 * 1024);
      assert.equal(Buffer.byteLength(body), 65_536);
      const answer = await ask(app, 'POST', '/assign', body);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
    });

    it('one byte more is 413, and nothing is done', async () => {
      const before = await world.journal();
      const answer = await ask(app, 'POST', '/assign', paddedTo(64 * 1024 + 1));
      assert.equal(answer.status, 413);
      assert.deepEqual(answer.body, {
        refused: 'the request body is larger than berth reads (64 KiB)',
        code: 'body_too_large',
      });
      assert.equal((await world.journal()).length, before.length);
    });
  });

  describe('step 4: opening the stores', () => {
    it('a --state directory that does not exist is 503, in the store failure words', async () => {
      const answer = await post(appOver(missingState), '/adopt', { node: 'box' });
      assert.equal(answer.status, 503);
      assert.deepEqual(Object.keys(answer.body ?? {}), ['refused', 'code']);
      const refused = String(answer.body?.refused);
      assert.ok(refused.startsWith(CANNOT_OPEN), refused);
      assert.ok(refused.includes(missingState), refused);
    });

    it('a corrupt state.json is 503 naming the file, and the file is left as it was', async () => {
      const broken = await makeWorld();
      try {
        await writeFile(join(broken.state, 'state.json'), '{"assignments": ');
        const answer = await post(appOver(broken.state), '/assign', {
          node: 'box',
          module: 'postgres',
        });
        assert.equal(answer.status, 503);
        assert.equal(answer.body?.code, 'stores_unavailable');
        const refused = String(answer.body?.refused);
        assert.ok(refused.startsWith(CANNOT_OPEN), refused);
        assert.ok(refused.includes('state.json'), refused);
        assert.equal(await readFile(join(broken.state, 'state.json'), 'utf8'), '{"assignments": ');
      } finally {
        await broken.cleanup();
      }
    });
  });

  describe('step 5: running the command', () => {
    it('200 carries what the command said, beside its typed result', async () => {
      const fresh = await makeWorld();
      try {
        await fresh.writeModule('postgres', POSTGRES);
        const answer = await post(appOver(fresh.state), '/assign', {
          node: 'box',
          module: 'postgres',
        });
        assert.equal(answer.status, 200);
        assert.deepEqual(untimed(answer.body), {
          format_version: 1,
          said: 'box is to run postgres',
          nodes: { box: { steps: [], blockers: [], outcome: 'done' } },
        });
      } finally {
        await fresh.cleanup();
      }
    });

    it('an assignment kept that does not resolve is 409 with both said and refused, and stays kept', async () => {
      const fresh = await makeWorld();
      try {
        const answer = await post(appOver(fresh.state), '/assign', {
          node: 'box',
          module: 'gitea',
        });
        assert.equal(answer.status, 409);
        assert.deepEqual(Object.keys(answer.body ?? {}).sort(), [
          'code',
          'format_version',
          'nodes',
          'refused',
          'said',
        ]);
        assert.equal(answer.body?.said, 'box is to run gitea');
        assert.equal(answer.body?.code, 'does_not_resolve');
        assert.deepEqual(untimed(answer.body)?.nodes, {
          box: { steps: [], blockers: [], outcome: 'refused', code: 'does_not_resolve' },
        });
        assert.match(String(answer.body?.refused), /^gitea does not resolve: /);
        const status = await fresh.berth('status', 'box', '--json');
        assert.equal(status.code, 0, status.stderr);
        assert.match(status.stdout, /gitea/);
      } finally {
        await fresh.cleanup();
      }
    });

    it('a refusal with nothing said is 409 with an empty said, and no node reached', async () => {
      const answer = await post(app, '/assign', { node: 'nowhere', module: 'postgres' });
      assert.equal(answer.status, 409);
      assert.deepEqual(answer.body, {
        format_version: 1,
        nodes: {},
        said: '',
        refused: 'berth does not know node nowhere; add it under nodes in berth.json',
        code: 'unknown_node',
      });
    });

    it('the journal records the act as alice, via the api', async () => {
      const fresh = await makeWorld();
      try {
        await fresh.writeModule('postgres', POSTGRES);
        await post(appOver(fresh.state), '/assign', { node: 'box', module: 'postgres' });
        const [entry, ...more] = await fresh.journal();
        assert.equal(more.length, 0);
        assert.equal(entry?.actor, 'alice');
        assert.equal(entry?.via, 'api');
        assert.equal(entry?.act, 'assign');
        assert.equal(entry?.node, 'box');
        assert.equal(entry?.module, 'postgres');
        assert.equal(entry?.outcome, 'done');
      } finally {
        await fresh.cleanup();
      }
    });

    it('a mint field in the body is no --mint: a take that would mint over found data is refused', async () => {
      const held = await makeWorld();
      try {
        await held.writeModule('postgres', POSTGRES);
        await held.writeModule('gitea', GITEA);
        await held.onBox('/var/lib/gitea/repo', 'data');
        await held.onBox('/etc/gitea/db_password', 'hunter2\n');
        const api = appOver(held.state);
        assert.equal((await post(api, '/adopt', { node: 'box' })).status, 200);
        const preview = await post(api, '/take', { node: 'box', module: 'gitea' });
        assert.equal(preview.status, 200);
        const act = await post(api, '/take', {
          node: 'box',
          module: 'gitea',
          yes: true,
          digest: digestOf(String(preview.body?.said)),
          mint: ['admin_token'],
        });
        assert.equal(act.status, 409);
        assert.match(String(act.body?.refused), /admin_token .*--mint admin_token/);
        await assert.rejects(access(join(held.root, 'etc/gitea/admin_token')));
      } finally {
        await held.cleanup();
      }
    });
  });

  describe('an act the journal cannot record', () => {
    it('is 409 with what was said, and words saying it was done but not journaled', async () => {
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
      await post(app, '/unassign', { node: 'box', module: 'postgres' });
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
    });
  });

  describe('an unexpected failure', () => {
    let broken: App;
    beforeEach(() => {
      broken = appOver(world.state, {
        machines: () => {
          throw new Error('the machines are on fire');
        },
      });
    });

    it('is 500 {refused}, in words, with no stack trace and no inner message', async (t) => {
      const logged = t.mock.method(console, 'error', () => {});
      const answer = await post(broken, '/assign', { node: 'box', module: 'postgres' });
      assert.equal(answer.status, 500);
      assert.equal(answer.type, 'application/json');
      assert.deepEqual(answer.body, {
        refused:
          'berth failed unexpectedly while answering; the request may not have been carried out',
        code: 'failed',
      });
      assert.equal(logged.mock.callCount(), 1);
      const line = String(logged.mock.calls[0]?.arguments[0]);
      assert.equal(line, 'berth api: unexpected Error: the machines are on fire');
    });

    it('still releases the lock: the next request is answered, not kept waiting', async (t) => {
      t.mock.method(console, 'error', () => {});
      assert.equal(
        (await post(broken, '/assign', { node: 'box', module: 'postgres' })).status,
        500,
      );
      // A lock still held would end this one in a refusal at its deadline.
      const next = await post(app, '/assign', { node: 'box', module: 'postgres' });
      assert.equal(next.status, 200, JSON.stringify(next.body));
    });
  });

  describe('any other request', () => {
    const others: [string, string][] = [
      ['GET', '/assign'],
      ['PUT', '/take'],
      ['DELETE', '/unassign'],
      ['PATCH', '/converge'],
      ['OPTIONS', '/adopt'],
      ['POST', '/nope'],
      ['POST', '/assign/'],
      ['POST', '/Assign'],
      ['POST', '/v1/assign'],
      ['GET', '/'],
    ];
    for (const [method, path] of others) {
      it(`${method} ${path} is 404 naming it and listing the five routes`, async () => {
        const answer = await ask(app, method, path);
        assert.equal(answer.status, 404);
        assert.equal(answer.type, 'application/json');
        assert.deepEqual(answer.body, { refused: noRoute(method, path), code: 'no_route' });
      });
    }

    it('names the path without its query', async () => {
      const answer = await ask(app, 'GET', '/assign?node=box&module=postgres');
      assert.deepEqual(answer.body, { refused: noRoute('GET', '/assign'), code: 'no_route' });
    });

    it('is 404, not 401, with or without credentials, under the refusing authenticator', async () => {
      const refusing = appOver(world.state, { authenticator: refuseAll() });
      const credentials: Record<string, string>[] = [{}, { Authorization: 'Bearer abc.def.ghi' }];
      for (const headers of credentials) {
        const answer = await ask(refusing, 'GET', '/assign', undefined, headers);
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.body, { refused: noRoute('GET', '/assign'), code: 'no_route' });
        assert.equal(answer.headers.get('www-authenticate'), null);
      }
    });

    it('a HEAD is 404 too, typed as JSON', async () => {
      const answer = await ask(app, 'HEAD', '/assign');
      assert.equal(answer.status, 404);
      assert.equal(answer.type, 'application/json');
    });
  });

  it('every answer, whatever its status, is application/json', async (t) => {
    t.mock.method(console, 'error', () => {});
    const refusing = appOver(world.state, { authenticator: refuseAll() });
    const broken = appOver(world.state, {
      stores: { ...memoryStores(), open: () => Promise.reject(new TypeError('not a store')) },
      machines: () => {
        throw new Error('unreachable');
      },
    });
    const answers = await Promise.all([
      post(app, '/assign', { node: 'box', module: 'postgres' }),
      ask(app, 'POST', '/assign', 'nope'),
      post(refusing, '/assign', { node: 'box', module: 'postgres' }),
      ask(app, 'GET', '/nope'),
      post(app, '/assign', { node: 'nowhere', module: 'postgres' }),
      ask(app, 'POST', '/assign', 'x'.repeat(65 * 1024)),
      post(broken, '/adopt', { node: 'box' }),
      post(appOver(missingState), '/adopt', { node: 'box' }),
    ]);
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 400, 401, 404, 409, 413, 503, 503],
    );
    for (const answer of answers) assert.equal(answer.type, 'application/json');
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
