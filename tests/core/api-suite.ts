/**
 * The Command API's every status, its order and its words, as a client meets them: one
 * suite, run over each setup that serves the API. The core's app in process (memory
 * stores, machines in memory: tests/core/api.test.ts, on Node and Deno alike) and the
 * real `berth api` over a socket (tests/api-served.test.ts) answer it the same.
 *
 * It imports only node:test, node:assert and the standards-only core, so that it runs on
 * both runtimes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { untimed } from '../helpers/timed.ts';

export interface Answer {
  status: number;
  type: string | null;
  headers: Headers;
  /** The JSON body, or undefined when there was none (a HEAD). */
  body: Record<string, unknown> | undefined;
}

export type Body = string | Uint8Array<ArrayBuffer>;

/** What a journal line says of an act. */
export interface Journaled {
  actor: string;
  via: string;
  act: string;
  node: string;
  /** The target the request named: the node itself for a node alone. */
  target?: string;
  module?: string;
  outcome: string;
  said?: string;
}

/** The Command API served over a world of NODES whose catalog holds MODULES. */
export interface Served {
  /** A request whose credentials the API accepts, as `subject`. */
  ask(method: string, path: string, body?: Body, headers?: Record<string, string>): Promise<Answer>;
  /** The same request with no credentials at all. */
  askWithout(method: string, path: string, body?: Body): Promise<Answer>;
  close(): Promise<void>;
}

export interface World extends Served {
  /** Who the accepted credentials name. */
  subject: string;
  /** What a request without credentials is answered, in the setup's authenticator's words. */
  refusal: { refused: string; challenge: string };
  /** Every act journaled so far, oldest first. */
  journal(): Promise<Journaled[]>;
  /** The modules `node` is to run, as its record keeps them. */
  assigned(node: string): Promise<string[]>;
  /** Puts a file on `node` as a hand install would leave it. */
  placeOn(node: string, path: string, content: string): Promise<void>;
  /** The text of a file on `node`, or undefined when there is none. */
  fileOn(node: string, path: string): Promise<string | undefined>;
  /** The same API over stores that cannot be opened, and the words it answers an act with. */
  withoutStores(): Promise<Served & { refused: string }>;
}

/** A way to serve the API: the core's app in process, or the served binary. */
export interface ApiSetup {
  name: string;
  open(): Promise<World>;
}

/** The nodes of berth.json: each test that changes one has its own. */
export const NODES = [
  'box',
  'subject',
  'extra',
  'limit',
  'said',
  'kept',
  'released',
  'placed',
  'adopted',
  'held',
  'typed',
];

/** The catalog: postgres, gitea (which does not resolve: no redis), and a forge with a secret. */
export const MODULES: Record<string, unknown> = {
  postgres: {
    description: 'the database',
    data: ['/var/lib/postgresql'],
    files: { '/etc/postgresql/berth.conf': { content: 'port = 5432\n' } },
  },
  gitea: { needs: ['postgres', 'redis'] },
  forge: {
    description: 'a forge',
    data: ['/var/lib/forge'],
    secrets: { token: { path: '/etc/forge/token' } },
  },
};

const ROUTES = 'POST /assign, POST /unassign, POST /take, POST /converge, POST /adopt';
export const noRoute = (method: string, path: string) =>
  `no route for ${method} ${path}; berth answers ${ROUTES}`;
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

/** A request for `/assign <node> postgres` padded to exactly `bytes` bytes. */
function paddedTo(node: string, bytes: number): string {
  const bare = JSON.stringify({ node, module: 'postgres', pad: '' });
  return JSON.stringify({ node, module: 'postgres', pad: 'x'.repeat(bytes - bare.length) });
}

export function apiSuite(setup: ApiSetup): void {
  describe(`the Command API, ${setup.name}`, () => {
    let world: World;
    let broken: Served & { refused: string };
    before(async () => {
      world = await setup.open();
      broken = await world.withoutStores();
    });
    after(async () => {
      await broken?.close();
      await world?.close();
    });
    const post = (path: string, json: unknown) => world.ask('POST', path, JSON.stringify(json));

    describe('step 1: authentication comes before anything else', () => {
      for (const route of ALL_ROUTES)
        it(`POST ${route} without credentials is 401 with the authenticator's words and challenge`, async () => {
          const answer = await world.askWithout(
            'POST',
            route,
            '{"node":"box","module":"postgres"}',
          );
          assert.equal(answer.status, 401);
          assert.equal(answer.type, 'application/json');
          assert.deepEqual(answer.body, { refused: world.refusal.refused, code: 'unauthorized' });
          assert.equal(answer.headers.get('www-authenticate'), world.refusal.challenge);
        });

      const unreadable: [string, string][] = [
        ['an empty body', ''],
        ['a body that is not JSON', 'node=box'],
        ['a body without the required fields', '{}'],
        ['a body over 64 KiB', JSON.stringify({ node: 'box', pad: 'x'.repeat(70 * 1024) })],
      ];
      for (const [what, body] of unreadable)
        it(`${what} is still 401 without credentials`, async () => {
          const answer = await world.askWithout('POST', '/assign', body);
          assert.equal(answer.status, 401);
          assert.deepEqual(answer.body, { refused: world.refusal.refused, code: 'unauthorized' });
        });

      it('is 401 even when the stores cannot be opened', async () => {
        const answer = await broken.askWithout('POST', '/adopt', '{"node":"box"}');
        assert.equal(answer.status, 401);
      });

      it('a request that passes acts as the subject its credentials name, via the api', async () => {
        assert.equal((await post('/assign', { node: 'subject', module: 'postgres' })).status, 200);
        const acts = (await world.journal()).filter((entry) => entry.node === 'subject');
        assert.deepEqual(
          acts.map((entry) => [entry.actor, entry.via, entry.act]),
          [[world.subject, 'api', 'assign']],
        );
      });
    });

    describe('step 2: decoding the body', () => {
      const notJson = [
        '',
        '{',
        'nope',
        'node=box',
        '{"node": "box",',
        '{"node": "box",}',
        "{'node': 'box'}",
      ];
      for (const body of notJson)
        it(`${JSON.stringify(body)} is 400 with the JSON parser's own message`, async () => {
          const answer = await world.ask('POST', '/assign', body);
          assert.equal(answer.status, 400);
          assert.deepEqual(answer.body, {
            refused: NOT_UNDERSTOOD + jsonParseMessage(body),
            code: 'invalid_request',
          });
        });

      it('an empty body is 400 on every route, before the required fields are checked', async () => {
        for (const route of ALL_ROUTES) {
          const answer = await world.ask('POST', route, '');
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
      for (const [what, body, field] of wrongShape)
        it(`${what} is 400, and the decoder's message names the field`, async () => {
          const answer = await world.ask('POST', '/take', body);
          assert.equal(answer.status, 400);
          const refused = String(answer.body?.refused);
          assert.ok(refused.startsWith(NOT_UNDERSTOOD + field), refused);
          assert.deepEqual(Object.keys(answer.body ?? {}), ['refused', 'code']);
        });

      it('yes: "true" is refused with what was expected and what came', async () => {
        const answer = await post('/take', { node: 'box', module: 'postgres', yes: 'true' });
        assert.deepEqual(answer.body, {
          refused: `${NOT_UNDERSTOOD}yes: expected true or false, got the string "true"`,
          code: 'invalid_request',
        });
      });

      const notAnObject: [string, string, RegExp][] = [
        ['null', 'null', /got null$/],
        ['a JSON array', '[]', /got a list$/],
        [
          'a JSON array holding a request',
          '[{"node": "box", "module": "postgres"}]',
          /got a list$/,
        ],
        ['a JSON string', '"box"', /got the string "box"$/],
        ['a JSON number', '42', /got the number 42$/],
      ];
      for (const [what, body, received] of notAnObject)
        it(`${what} is 400: the body must be an object`, async () => {
          const answer = await world.ask('POST', '/assign', body);
          assert.equal(answer.status, 400);
          const refused = String(answer.body?.refused);
          assert.ok(refused.startsWith(`${NOT_UNDERSTOOD}expected an object, got `), refused);
          assert.match(refused, received);
        });

      it('a body that is not UTF-8 is 400', async () => {
        const answer = await world.ask('POST', '/assign', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]));
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, {
          refused: `${NOT_UNDERSTOOD}the body is not UTF-8 text`,
          code: 'invalid_request',
        });
      });

      it('is checked before the required fields: a wrongly typed node is not "needed"', async () => {
        const answer = await post('/assign', { node: 5 });
        assert.equal(answer.status, 400);
        assert.ok(String(answer.body?.refused).startsWith(`${NOT_UNDERSTOOD}node: `));
      });

      it('unknown extra fields are accepted and the command runs', async () => {
        const answer = await post('/assign', {
          node: 'extra',
          module: 'postgres',
          colour: 'blue',
          nested: { deep: [1, 2] },
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.body?.said, 'extra is to run postgres');
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
      for (const route of WITH_MODULE)
        for (const body of withoutModule)
          it(`POST ${route} ${JSON.stringify(body)} is 400 "${BOTH_NEEDED}"`, async () => {
            const answer = await post(route, body);
            assert.equal(answer.status, 400);
            assert.deepEqual(answer.body, { refused: BOTH_NEEDED, code: 'fields_missing' });
          });
      for (const route of NODE_ONLY)
        for (const body of [{}, { node: '' }, { module: 'postgres' }])
          it(`POST ${route} ${JSON.stringify(body)} is 400 "${NODE_NEEDED}"`, async () => {
            const answer = await post(route, body);
            assert.equal(answer.status, 400);
            assert.deepEqual(answer.body, { refused: NODE_NEEDED, code: 'fields_missing' });
          });

      it('are checked before the stores are opened', async () => {
        const answer = await broken.ask('POST', '/assign', '{"node":"box"}');
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, { refused: BOTH_NEEDED, code: 'fields_missing' });
      });

      it('a name that is present but breaks the name rule is the command refusing: 409, not 400', async () => {
        const answer = await post('/assign', { node: ' ', module: 'postgres' });
        assert.equal(answer.status, 409);
        assert.equal(answer.body?.said, '');
        assert.equal(answer.body?.code, 'invalid_name');
        assert.match(String(answer.body?.refused), /^" " is not a node name: /);
      });
    });

    describe('the body limit', () => {
      it('a body of exactly 64 KiB is read', async () => {
        const body = paddedTo('limit', 64 * 1024);
        assert.equal(new TextEncoder().encode(body).length, 65_536);
        const answer = await world.ask('POST', '/assign', body);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(answer.body?.said, 'limit is to run postgres');
      });

      it('one byte more is 413, says so, closes the connection, and nothing is done', async () => {
        const before = (await world.journal()).length;
        const answer = await world.ask('POST', '/assign', paddedTo('limit', 64 * 1024 + 1));
        assert.equal(answer.status, 413);
        assert.deepEqual(answer.body, {
          refused: 'the request body is larger than berth reads (64 KiB)',
          code: 'body_too_large',
        });
        assert.equal(answer.headers.get('connection'), 'close');
        assert.equal((await world.journal()).length, before);
      });
    });

    describe('step 4: opening the stores', () => {
      it('stores that cannot be opened are 503, in the store failure words', async () => {
        const answer = await broken.ask('POST', '/adopt', '{"node":"box"}');
        assert.equal(answer.status, 503);
        assert.deepEqual(answer.body, { refused: broken.refused, code: 'stores_unavailable' });
        assert.ok(broken.refused.startsWith(CANNOT_OPEN), broken.refused);
      });
    });

    describe('step 5: running the command', () => {
      it('200 carries what the command said beside its typed result, and the journal has the act', async () => {
        const answer = await post('/assign', { node: 'said', module: 'postgres' });
        assert.equal(answer.status, 200);
        assert.deepEqual(untimed(answer.body), {
          format_version: 1,
          said: 'said is to run postgres',
          nodes: { said: { steps: [], blockers: [], outcome: 'done' } },
        });
        const acts = (await world.journal()).filter((entry) => entry.node === 'said');
        assert.deepEqual(
          acts.map(({ actor, via, act, target, module, outcome, said }) => ({
            actor,
            via,
            act,
            target,
            module,
            outcome,
            said,
          })),
          [
            {
              actor: world.subject,
              via: 'api',
              act: 'assign',
              target: 'said',
              module: 'postgres',
              outcome: 'done',
              said: 'said is to run postgres',
            },
          ],
        );
      });

      it('an assignment kept that does not resolve is 409 with both said and refused, and stays kept', async () => {
        const answer = await post('/assign', { node: 'kept', module: 'gitea' });
        assert.equal(answer.status, 409);
        assert.deepEqual(Object.keys(answer.body ?? {}).sort(), [
          'code',
          'format_version',
          'nodes',
          'refused',
          'said',
        ]);
        assert.equal(answer.body?.said, 'kept is to run gitea');
        assert.equal(answer.body?.code, 'does_not_resolve');
        assert.deepEqual(untimed(answer.body as { nodes: unknown }).nodes, {
          kept: { steps: [], blockers: [], outcome: 'refused', code: 'does_not_resolve' },
        });
        assert.match(String(answer.body?.refused), /^gitea does not resolve: /);
        assert.deepEqual(await world.assigned('kept'), ['gitea']);
      });

      it('a refusal with nothing said is 409 with an empty said, and the node named', async () => {
        const answer = await post('/unassign', { node: 'released', module: 'postgres' });
        assert.equal(answer.status, 409);
        assert.deepEqual(untimed(answer.body), {
          format_version: 1,
          said: '',
          refused: 'released is not to run postgres; there is nothing to unassign',
          code: 'not_assigned',
          nodes: {
            released: { steps: [], blockers: [], outcome: 'refused', code: 'not_assigned' },
          },
        });
      });

      for (const [route, body] of [
        ['/assign', { node: 'nowhere', module: 'postgres' }],
        ['/converge', { node: 'nowhere' }],
      ] as const)
        it(`a node not in berth.json is 409 in the inventory words, no node reached (${route})`, async () => {
          const answer = await post(route, body);
          assert.equal(answer.status, 409);
          assert.deepEqual(answer.body, {
            format_version: 1,
            said: '',
            refused: 'berth does not know node nowhere; add it under nodes in berth.json',
            code: 'unknown_node',
            nodes: {},
          });
        });

      it('converge places an assigned module on the node: the preview changes nothing, the act writes', async () => {
        assert.equal((await post('/assign', { node: 'placed', module: 'postgres' })).status, 200);
        const preview = await post('/converge', { node: 'placed' });
        assert.equal(preview.status, 200, JSON.stringify(preview.body));
        assert.match(String(preview.body?.said), /\/etc\/postgresql\/berth\.conf/);
        assert.equal(await world.fileOn('placed', '/etc/postgresql/berth.conf'), undefined);
        const digest = /\ndigest ([0-9a-f]{64})$/.exec(String(preview.body?.said))?.[1];
        const answer = await post('/converge', { node: 'placed', yes: true, digest });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(await world.fileOn('placed', '/etc/postgresql/berth.conf'), 'port = 5432\n');
      });

      it('adopt of a node with nothing taken is 200 and says what it found', async () => {
        const answer = await post('/adopt', { node: 'adopted' });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.match(String(answer.body?.said), /^account of adopted, taken /);
      });

      it('a mint field in the body is no --mint: a take that would mint over found data is refused', async () => {
        await world.placeOn('held', '/var/lib/forge/repo', 'data');
        assert.equal((await post('/adopt', { node: 'held' })).status, 200);
        const preview = await post('/take', { node: 'held', module: 'forge' });
        assert.equal(preview.status, 200, JSON.stringify(preview.body));
        const digest = /\ndigest ([0-9a-f]{64})$/.exec(String(preview.body?.said))?.[1];
        const act = await post('/take', {
          node: 'held',
          module: 'forge',
          yes: true,
          digest,
          mint: ['token'],
        });
        assert.equal(act.status, 409);
        assert.match(String(act.body?.refused), /token .*--mint token/);
        assert.equal(await world.fileOn('held', '/etc/forge/token'), undefined);
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
      for (const [method, path] of others)
        it(`${method} ${path} is 404 naming it and listing the five routes, before authentication`, async () => {
          for (const answer of [
            await world.askWithout(method, path),
            await world.ask(method, path),
          ]) {
            assert.equal(answer.status, 404);
            assert.equal(answer.type, 'application/json');
            assert.deepEqual(answer.body, { refused: noRoute(method, path), code: 'no_route' });
            assert.equal(answer.headers.get('www-authenticate'), null);
          }
        });

      it('names the path without its query', async () => {
        const answer = await world.ask('GET', '/assign?node=box&module=postgres');
        assert.deepEqual(answer.body, { refused: noRoute('GET', '/assign'), code: 'no_route' });
      });

      it('a HEAD is 404 too, typed as JSON', async () => {
        const answer = await world.ask('HEAD', '/assign');
        assert.equal(answer.status, 404);
        assert.equal(answer.type, 'application/json');
      });
    });

    it('every answer, whatever its status, is application/json', async () => {
      const answers = await Promise.all([
        post('/assign', { node: 'typed', module: 'postgres' }),
        world.ask('POST', '/assign', 'nope'),
        world.askWithout('POST', '/assign', '{"node":"box","module":"postgres"}'),
        world.ask('GET', '/nope'),
        post('/assign', { node: 'nowhere', module: 'postgres' }),
        world.ask('POST', '/assign', 'x'.repeat(65 * 1024)),
        broken.ask('POST', '/adopt', '{"node":"box"}'),
      ]);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [200, 400, 401, 404, 409, 413, 503],
      );
      for (const answer of answers) assert.equal(answer.type, 'application/json');
    });
  });
}
