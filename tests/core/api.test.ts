/**
 * The Command API over the core alone, through `app.request()`: the in-memory stores, a
 * catalog and berth.json in memory, and machines in memory. The shared suite
 * (api-suite.ts) runs here as it runs over the served binary; below it, what only the
 * app in process can be made to meet (a lock held, a machine gone, a failure of berth's
 * own). It imports only node:test, node:assert and the standards-only core, so it runs
 * on two runtimes: `npm test` (Node) and `npm run test:deno`.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as v from 'valibot';
import { routes } from '../../src/commands/table.ts';
import type { Config } from '../../src/config/config.ts';
import { type AppOptions, createApp } from '../../src/http/app.ts';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { type CatalogEntry, parseDefinition } from '../../src/model/catalog.ts';
import { SettingsSchema } from '../../src/model/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import { StoreError, type Stores } from '../../src/stores/stores.ts';
import { entryShown } from '../../src/words/journal.ts';
import { surveyShown } from '../../src/words/kept-survey.ts';
import {
  type Answer,
  type ApiSetup,
  apiSuite,
  type Body,
  MODULES,
  NODES,
  noRoute,
} from './api-suite.ts';
import { type MemoryMachine, memoryMachine } from './memory-machine.ts';

const SUBJECT = 'alice';
const CREDENTIALS = 'Bearer alice-token';
const REFUSED = {
  refused: 'the test authenticator knows no one without the test token',
  challenge: 'Bearer realm="berth", error="invalid_token", error_description="refused by the test"',
};
/** Accepts the test token as alice, refuses anything else. */
const authenticator: Authenticator = {
  authenticate: ({ authorization }) =>
    authorization === CREDENTIALS ? { ok: true, subject: SUBJECT } : { ok: false, ...REFUSED },
};

function memoryConfig(): Config {
  const settings = v.parse(SettingsSchema, {
    nodes: Object.fromEntries(NODES.map((node) => [node, { root: '/' }])),
  });
  return {
    settings,
    catalog: {
      async names() {
        return Object.keys(MODULES).sort();
      },
      async entry(name): Promise<CatalogEntry> {
        const definition = MODULES[name];
        if (definition === undefined)
          return { name, problem: `the catalog has no module ${name}`, missing: true };
        return parseDefinition(name, `${name}.json`, JSON.stringify(definition));
      },
    },
  };
}

interface Core {
  app: ReturnType<typeof createApp>;
  stores: Stores;
  /** Each node's machine, made at its first use. */
  machineOf(node: string): MemoryMachine;
}

function core(options: Partial<AppOptions> = {}): Core {
  const stores = memoryStores({ lockWaitMs: 200 });
  const machines = new Map<string, MemoryMachine>();
  const machineOf = (node: string) => {
    const made = machines.get(node) ?? memoryMachine(node);
    machines.set(node, made);
    return made;
  };
  const config = memoryConfig();
  const app = createApp({
    routes: routes(),
    authenticator,
    loadConfig: async () => config,
    stores,
    machines: () => machineOf,
    now: () => new Date('2026-11-21T08:00:00.000Z'),
    ...options,
  });
  return { app, stores, machineOf };
}

async function ask(
  app: Core['app'],
  method: string,
  path: string,
  body?: Body | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await app.request(path, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}
const asAlice = (app: Core['app']) => (method: string, path: string, body?: Body) =>
  ask(app, method, path, body, { Authorization: CREDENTIALS });
const post = (app: Core['app'], path: string, json: unknown) =>
  asAlice(app)('POST', path, JSON.stringify(json));

/** Lets the event loop go round, for a request to get as far as it can without time. */
async function turns() {
  for (let i = 0; i < 10; i++) await new Promise((done) => setImmediate(done));
}

/** Stores whose every opening fails, as a state that cannot be reached. */
const unopenable = (): Stores => ({
  ...memoryStores(),
  open: () => Promise.reject(new StoreError('gone away')),
});

const inProcess: ApiSetup = {
  name: 'in process on the core (memory stores, machines in memory)',
  async open() {
    const { app, stores, machineOf } = core();
    return {
      subject: SUBJECT,
      refusal: REFUSED,
      ask: (method, path, body, headers = {}) =>
        ask(app, method, path, body, { Authorization: CREDENTIALS, ...headers }),
      askWithout: (method, path, body) => ask(app, method, path, body),
      // In the words `berth log --json` shows them in, made from each typed entry.
      journal: async () =>
        (await stores.readJournal()).flatMap((line) =>
          'entry' in line ? [entryShown(line.entry)] : [],
        ),
      assigned: async (node) => (await stores.readNode(node)).assigned,
      async placeOn(node, path, content) {
        const machine = machineOf(node);
        const parts = path.split('/').filter(Boolean);
        for (let i = 1; i < parts.length; i++)
          machine.directories.add(`/${parts.slice(0, i).join('/')}`);
        machine.files.set(path, { bytes: new TextEncoder().encode(content), mode: 0o644 });
      },
      async fileOn(node, path) {
        const file = machineOf(node).files.get(path);
        return file && new TextDecoder().decode(file.bytes);
      },
      async withoutStores() {
        const broken = core({ stores: unopenable() }).app;
        return {
          ask: asAlice(broken),
          askWithout: (method, path, body) => ask(broken, method, path, body),
          refused: 'the stores cannot be opened: gone away',
          close: async () => {},
        };
      },
      close: async () => {},
    };
  },
};

apiSuite(inProcess);

describe('the core Command API, what only the app in process meets', () => {
  let w: Core;
  beforeEach(() => {
    w = core();
  });

  it('answers 401 without reading the body: a body that never ends does not hold it', async () => {
    const endless = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const answer = await ask(w.app, 'POST', '/assign', endless);
    assert.equal(answer.status, 401);
  });

  it('a node whose lock is not had in time is 503 naming the holder, at its deadline', async (t) => {
    const held = await w.stores.openNode('box', 'take');
    try {
      // The stores' clock in the test's hands: the wait ends at its 200 ms, not before.
      t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
      let answered = false;
      const asked = post(w.app, '/assign', { node: 'box', module: 'postgres' }).finally(() => {
        answered = true;
      });
      await turns();
      t.mock.timers.tick(199);
      await turns();
      assert.equal(answered, false, 'answered before the deadline');
      t.mock.timers.tick(1);
      const answer = await asked;
      assert.equal(answer.status, 503);
      assert.match(
        String(answer.body?.refused),
        /^the stores cannot be opened: berth process \d+ on this process holds the lock of node box \(take, since .*\) and did not let go within 200ms$/,
      );
    } finally {
      await held.close();
    }
  });

  it('a machine that cannot be reached is the command refusing, 409, in words', async () => {
    w.machineOf('box').unreachable = true;
    await post(w.app, '/assign', { node: 'box', module: 'postgres' });
    const answer = await post(w.app, '/converge', { node: 'box' });
    assert.equal(answer.status, 409);
    assert.match(String(answer.body?.refused), /box cannot be reached/);
  });

  it("a converge preview is kept as the node's newest survey, by its subject; an act is not", async () => {
    await post(w.app, '/assign', { node: 'box', module: 'postgres' });
    const preview = await post(w.app, '/converge', { node: 'box' });
    const [kept] = await w.stores.readSurveys();
    const survey = kept && surveyShown(kept);
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
    assert.deepEqual(await w.stores.readSurveys(), [kept], 'a filtered preview is no survey');
    const digest = survey?.report.digest;
    await post(w.app, '/converge', { node: 'box', yes: true, digest });
    assert.deepEqual(await w.stores.readSurveys(), [kept], 'an act is no survey');
  });

  it("a converge preview refused at the node is its survey too, with the refusal's words", async () => {
    w.machineOf('box').unreachable = true;
    await post(w.app, '/assign', { node: 'box', module: 'postgres' });
    const answer = await post(w.app, '/converge', { node: 'box' });
    const [kept] = await w.stores.readSurveys(['box']);
    const survey = kept && surveyShown(kept);
    assert.equal(survey?.refused, answer.body?.refused);
    assert.equal(survey?.report.outcome, 'refused');
    assert.equal(survey?.report.code, 'unreachable');
    assert.equal(survey?.said, '');
  });

  describe('an unexpected failure', () => {
    const failing = (stores: Stores) =>
      core({
        stores,
        machines: () => {
          throw new Error('the machines are on fire');
        },
      }).app;

    it('is 500 {refused}, in words, with no stack trace and no inner message', async (t) => {
      const logged = t.mock.method(console, 'error', () => {});
      const answer = await post(failing(w.stores), '/converge', { node: 'box' });
      assert.equal(answer.status, 500);
      assert.equal(answer.type, 'application/json');
      assert.deepEqual(answer.body, {
        refused:
          'berth failed unexpectedly while answering; the request may not have been carried out',
        code: 'internal_error',
      });
      assert.equal(logged.mock.callCount(), 1);
      const line = String(logged.mock.calls[0]?.arguments[0]);
      assert.equal(line, 'berth api: unexpected Error: the machines are on fire');
    });

    it('still lets go of the lock: the next request on the node is answered', async (t) => {
      t.mock.method(console, 'error', () => {});
      const answer = await post(failing(w.stores), '/converge', { node: 'box' });
      assert.equal(answer.status, 500);
      // A lock still held would end this one in a refusal at its deadline.
      const next = await post(w.app, '/assign', { node: 'box', module: 'postgres' });
      assert.equal(next.status, 200, JSON.stringify(next.body));
    });
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
