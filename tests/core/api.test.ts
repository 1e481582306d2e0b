/**
 * The Command API's every status, its order and its words, through `app.request()`
 * over the core alone: the in-memory stores, a catalog and berth.json in memory, and a
 * machine in memory. It imports only node:test, node:assert and the standards-only
 * core, so one suite runs on two runtimes: `npm test` (Node) and `npm run test:deno`.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as v from 'valibot';
import { type CatalogEntry, parseDefinition } from '../../src/catalog.ts';
import { routes } from '../../src/commands/table.ts';
import type { Config } from '../../src/config/config.ts';
import { type AppOptions, createApp } from '../../src/http/app.ts';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { SettingsSchema } from '../../src/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import { StoreError, type Stores } from '../../src/stores/stores.ts';
import { type MemoryMachine, memoryMachine } from './memory-machine.ts';

/** An answer with each node's time taken checked (whole milliseconds) and left out. */
function untimed(body: unknown): unknown {
  const answer = body as { nodes?: Record<string, { ms?: unknown }> };
  const nodes = Object.entries(answer.nodes ?? {}).map(([node, { ms, ...part }]) => {
    assert.ok(Number.isSafeInteger(ms) && (ms as number) >= 0, `${node} took ${String(ms)} ms`);
    return [node, part];
  });
  return { ...answer, nodes: Object.fromEntries(nodes) };
}

const ROUTES = 'POST /assign, POST /unassign, POST /take, POST /converge, POST /adopt';
const noRoute = (method: string, path: string) =>
  `no route for ${method} ${path}; berth answers ${ROUTES}`;
const NOT_UNDERSTOOD = 'this is not a request berth understands: ';
const WITH_MODULE = ['/assign', '/unassign', '/take'];
const NODE_ONLY = ['/converge', '/adopt'];
const ALL_ROUTES = [...WITH_MODULE, ...NODE_ONLY];

const DEFINITIONS: Record<string, string> = {
  postgres: JSON.stringify({
    description: 'the database',
    data: ['/var/lib/postgresql'],
    files: { '/etc/postgresql/berth.conf': { content: 'port = 5432\n' } },
  }),
  gitea: JSON.stringify({ needs: ['postgres', 'redis'] }),
};

function memoryConfig(): Config {
  const settings = v.parse(SettingsSchema, { nodes: { box: { root: '/' } } });
  return {
    settings,
    catalog: {
      async names() {
        return Object.keys(DEFINITIONS).sort();
      },
      async entry(name): Promise<CatalogEntry> {
        const text = DEFINITIONS[name];
        if (text === undefined)
          return { name, problem: `the catalog has no module ${name}`, missing: true };
        return parseDefinition(name, `${name}.json`, text);
      },
    },
  };
}

const REFUSED = {
  refused: 'the test authenticator refuses everyone',
  challenge: 'Bearer realm="berth", error="invalid_token", error_description="refused by the test"',
};
const refuseAll: Authenticator = {
  authenticate: () => async () => ({ ok: false, ...REFUSED }),
};
const acceptAs = (subject: string): Authenticator => ({
  authenticate: () => ({ ok: true, subject }),
});

interface World {
  app: ReturnType<typeof createApp>;
  stores: Stores;
  machine: MemoryMachine;
}

function world(options: Partial<AppOptions> = {}): World {
  const stores = memoryStores({ lockWaitMs: 200 });
  const machine = memoryMachine();
  const config = memoryConfig();
  const app = createApp({
    routes: routes(),
    authenticator: acceptAs('alice'),
    loadConfig: async () => config,
    stores,
    machines: () => () => machine,
    now: () => new Date('2026-11-21T08:00:00.000Z'),
    ...options,
  });
  return { app, stores, machine };
}

interface Answer {
  status: number;
  type: string | null;
  headers: Headers;
  body: Record<string, unknown> | undefined;
}

async function ask(
  app: World['app'],
  method: string,
  path: string,
  body?: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = body;
  const response = await app.request(path, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}
const post = (app: World['app'], path: string, json: unknown) =>
  ask(app, 'POST', path, JSON.stringify(json));

/** What JSON.parse says about a text, which is what the decoder passes on. */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(text)} is valid JSON`);
}

describe('the core Command API (memory stores, memory machine) through app.request()', () => {
  let w: World;
  beforeEach(() => {
    w = world();
  });

  describe('step 1: authentication, before anything else', () => {
    for (const route of ALL_ROUTES)
      it(`POST ${route} refused is 401 with the authenticator's words and challenge`, async () => {
        const { app } = world({ authenticator: refuseAll });
        const answer = await ask(app, 'POST', route, 'not even JSON');
        assert.equal(answer.status, 401);
        assert.equal(answer.type, 'application/json');
        assert.deepEqual(answer.body, { refused: REFUSED.refused, code: 'unauthorized' });
        assert.equal(answer.headers.get('www-authenticate'), REFUSED.challenge);
      });

    it('is 401 even when the stores cannot be opened, and the body is not read', async () => {
      const stores = { ...memoryStores(), open: () => Promise.reject(new StoreError('gone')) };
      const { app } = world({ authenticator: refuseAll, stores });
      const answer = await ask(app, 'POST', '/assign', 'x'.repeat(70 * 1024));
      assert.equal(answer.status, 401);
    });
  });

  describe('step 2: decoding the body', () => {
    for (const body of ['', '{', 'nope', '{"node": "box",}'])
      it(`${JSON.stringify(body)} is 400 with the JSON parser's own message`, async () => {
        const answer = await ask(w.app, 'POST', '/assign', body);
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, {
          refused: `${NOT_UNDERSTOOD}${jsonParseMessage(body)}`,
          code: 'invalid_request',
        });
      });

    for (const body of ['[]', '"box"', '7', 'null'])
      it(`${body} is 400: the body must be an object`, async () => {
        const answer = await ask(w.app, 'POST', '/assign', body);
        assert.equal(answer.status, 400);
        assert.match(String(answer.body?.refused), new RegExp(`^${NOT_UNDERSTOOD}`));
      });

    it('a wrongly typed node is 400 naming the field, before the required fields', async () => {
      const answer = await post(w.app, '/converge', { node: 7 });
      assert.equal(answer.status, 400);
      assert.match(String(answer.body?.refused), new RegExp(`^${NOT_UNDERSTOOD}.*node`));
    });

    it('a body that is not UTF-8 is 400', async () => {
      const answer = await ask(w.app, 'POST', '/assign', new Uint8Array([0x7b, 0xff, 0x7d]));
      assert.equal(answer.status, 400);
      assert.match(String(answer.body?.refused), new RegExp(`^${NOT_UNDERSTOOD}`));
    });
  });

  describe('step 3: the required fields', () => {
    for (const route of WITH_MODULE)
      it(`POST ${route} without a module is 400 "both node and module are needed"`, async () => {
        const answer = await post(w.app, route, { node: 'box' });
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, {
          refused: 'both node and module are needed',
          code: 'fields_missing',
        });
      });
    for (const route of NODE_ONLY)
      it(`POST ${route} without a node is 400 "node is needed"`, async () => {
        const answer = await post(w.app, route, {});
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, { refused: 'node is needed', code: 'fields_missing' });
      });

    it('are checked before the stores are opened', async () => {
      const stores = { ...memoryStores(), open: () => Promise.reject(new StoreError('gone')) };
      const answer = await post(world({ stores }).app, '/assign', { node: 'box' });
      assert.equal(answer.status, 400);
    });
  });

  describe('the body limit', () => {
    it('a body of exactly 64 KiB is read', async () => {
      const json = JSON.stringify({ node: 'box', module: 'postgres', pad: '' });
      const body = json.replace('""', `"${'x'.repeat(64 * 1024 - json.length)}"`);
      assert.equal(body.length, 64 * 1024);
      const answer = await ask(w.app, 'POST', '/assign', body);
      assert.equal(answer.status, 200);
    });

    it('one byte more is 413, says so, closes the connection, and nothing is done', async () => {
      const answer = await ask(w.app, 'POST', '/assign', 'x'.repeat(64 * 1024 + 1));
      assert.equal(answer.status, 413);
      assert.deepEqual(answer.body, {
        refused: 'the request body is larger than berth reads (64 KiB)',
        code: 'body_too_large',
      });
      assert.equal(answer.headers.get('connection'), 'close');
      assert.deepEqual(await w.stores.readJournal(), []);
    });
  });

  describe('step 4: opening the stores', () => {
    it('stores that cannot be opened are 503 in the store failure words', async () => {
      const stores = { ...memoryStores(), open: () => Promise.reject(new StoreError('gone away')) };
      const answer = await post(world({ stores }).app, '/adopt', { node: 'box' });
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.body, {
        refused: 'the stores cannot be opened: gone away',
        code: 'stores_unavailable',
      });
    });

    it('a node whose lock is not had in time is 503 naming the holder', async () => {
      const held = await w.stores.openNode('box', 'take');
      try {
        const answer = await post(w.app, '/assign', { node: 'box', module: 'postgres' });
        assert.equal(answer.status, 503);
        assert.match(
          String(answer.body?.refused),
          /^the stores cannot be opened: berth process \d+ on this process holds the lock of node box \(take, since .*\) and did not let go within 200ms$/,
        );
      } finally {
        await held.close();
      }
    });
  });

  describe('step 5: the command', () => {
    it('200 carries what the command said beside its typed result, and the journal has the act as alice, via the api', async () => {
      const answer = await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      assert.equal(answer.status, 200);
      assert.deepEqual(untimed(answer.body), {
        format_version: 1,
        said: 'box is to run postgres',
        nodes: { box: { steps: [], blockers: [], outcome: 'done' } },
      });
      assert.deepEqual(await w.stores.readJournal(), [
        {
          entry: {
            entry_version: 2,
            at: '2026-11-21T08:00:00.000Z',
            actor: 'alice',
            via: 'api',
            act: 'assign',
            node: 'box',
            target: 'box',
            module: 'postgres',
            digest: undefined,
            outcome: 'done',
            code: undefined,
            steps: [],
            blockers: [],
            said: 'box is to run postgres',
            error: undefined,
          },
        },
      ]);
    });

    it('an assignment kept that does not resolve is 409 with both said and refused', async () => {
      const answer = await post(w.app, '/assign', { node: 'box', module: 'gitea' });
      assert.equal(answer.status, 409);
      assert.equal(answer.body?.said, 'box is to run gitea');
      assert.match(String(answer.body?.refused), /gitea/);
      const record = await w.stores.readNode('box');
      assert.deepEqual(record.assigned, ['gitea']);
    });

    it('a refusal with nothing said is 409 with an empty said', async () => {
      const answer = await post(w.app, '/unassign', { node: 'box', module: 'postgres' });
      assert.equal(answer.status, 409);
      assert.deepEqual(untimed(answer.body), {
        format_version: 1,
        said: '',
        refused: 'box is not to run postgres; there is nothing to unassign',
        code: 'not_assigned',
        nodes: { box: { steps: [], blockers: [], outcome: 'refused', code: 'not_assigned' } },
      });
    });

    it('a node not in berth.json is 409 in the inventory words', async () => {
      const answer = await post(w.app, '/converge', { node: 'nowhere' });
      assert.equal(answer.status, 409);
      assert.deepEqual(answer.body, {
        format_version: 1,
        said: '',
        refused: 'berth does not know node nowhere; add it under nodes in berth.json',
        code: 'unknown_node',
        nodes: {},
      });
    });

    it('a name that breaks the name rule is the command refusing: 409, not 400', async () => {
      const answer = await post(w.app, '/assign', { node: 'box', module: 'Bad Name' });
      assert.equal(answer.status, 409);
    });

    it('converge places an assigned module on the memory machine: 200', async () => {
      await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      const preview = await post(w.app, '/converge', { node: 'box' });
      assert.equal(preview.status, 200, JSON.stringify(preview.body));
      assert.match(String(preview.body?.said), /\/etc\/postgresql\/berth\.conf/);
      assert.equal(w.machine.files.size, 0);
      const digest = /\ndigest ([0-9a-f]{64})$/.exec(String(preview.body?.said))?.[1];
      const answer = await post(w.app, '/converge', { node: 'box', yes: true, digest });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(
        new TextDecoder().decode(w.machine.files.get('/etc/postgresql/berth.conf')?.bytes),
        'port = 5432\n',
      );
    });

    it("a converge preview is kept as the node's newest survey, by its subject; an act is not", async () => {
      await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      const preview = await post(w.app, '/converge', { node: 'box' });
      const [survey] = await w.stores.readSurveys();
      assert.equal(survey?.node, 'box');
      assert.equal(survey?.actor, 'alice');
      assert.equal(survey?.via, 'api');
      assert.equal(survey?.at, '2026-11-21T08:00:00.000Z');
      assert.deepEqual(
        survey?.report,
        (preview.body?.nodes as Record<string, unknown> | undefined)?.box,
      );
      assert.equal(survey?.said, preview.body?.said, 'its words, whole');
      await post(w.app, '/converge', { node: 'box', filter: 'postgres' });
      assert.deepEqual(await w.stores.readSurveys(), [survey], 'a filtered preview is no survey');
      const digest = survey?.report.digest;
      await post(w.app, '/converge', { node: 'box', yes: true, digest });
      assert.deepEqual(await w.stores.readSurveys(), [survey], 'an act is no survey');
    });

    it("a converge preview refused at the node is its survey too, with the refusal's words", async () => {
      w.machine.unreachable = true;
      await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      const answer = await post(w.app, '/converge', { node: 'box' });
      const [survey] = await w.stores.readSurveys(['box']);
      assert.equal(survey?.refused, answer.body?.refused);
      assert.equal(survey?.report.outcome, 'refused');
      assert.equal(survey?.report.code, 'unreachable');
      assert.equal(survey?.said, '');
    });

    it('adopt of a node with nothing taken is 200 and says so', async () => {
      const answer = await post(w.app, '/adopt', { node: 'box' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(typeof answer.body?.said, 'string');
    });

    it('a machine that cannot be reached is the command refusing, 409, in words', async () => {
      w.machine.unreachable = true;
      await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      const answer = await post(w.app, '/converge', { node: 'box' });
      assert.equal(answer.status, 409);
      assert.match(String(answer.body?.refused), /box cannot be reached/);
    });
  });

  describe('an unexpected failure', () => {
    it('is 500 {refused} in words, with no inner message', async (t) => {
      t.mock.method(console, 'error', () => {});
      const { app } = world({
        machines: () => {
          throw new Error('secret inner words');
        },
      });
      const answer = await post(app, '/converge', { node: 'box' });
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, {
        refused:
          'berth failed unexpectedly while answering; the request may not have been carried out',
        code: 'failed',
      });
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
      ['GET', '/'],
    ];
    for (const [method, path] of others)
      it(`${method} ${path} is 404 naming it and listing the five routes, before authentication`, async () => {
        const { app } = world({ authenticator: refuseAll });
        const answer = await ask(app, method, path);
        assert.equal(answer.status, 404);
        assert.equal(answer.type, 'application/json');
        assert.deepEqual(answer.body, { refused: noRoute(method, path), code: 'no_route' });
        assert.equal(answer.headers.get('www-authenticate'), null);
      });

    it('names the path without its query', async () => {
      const answer = await ask(w.app, 'GET', '/assign?node=box&module=postgres');
      assert.deepEqual(answer.body, { refused: noRoute('GET', '/assign'), code: 'no_route' });
    });

    it('a CONNECT that reaches the app is 404 naming its authority, as the Node server says', async () => {
      // new Request() refuses CONNECT (a forbidden method), but a server may hand one on:
      // Deno.serve does, with the URL http://<authority>.
      const request = { method: 'CONNECT', url: 'http://example.com:443', headers: new Headers() };
      const response = await w.app.fetch(request as unknown as Request);
      assert.equal(response.status, 404);
      assert.deepEqual(await response.json(), {
        refused: noRoute('CONNECT', 'example.com:443'),
        code: 'no_route',
      });
    });
  });
});
