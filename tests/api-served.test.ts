/**
 * The Command API suite (tests/core/api-suite.ts) over the real `berth api`: the built
 * binary over a state directory, believing a loopback issuer's tokens, asked over a
 * socket. The same suite runs over the core's app in process (tests/core/api.test.ts).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type Answer,
  type ApiSetup,
  apiSuite,
  type Body,
  type Journaled,
  MODULES,
  NODES,
  type Served,
} from './core/api-suite.ts';
import { httpAsk } from './helpers/api-process.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { makeWorld } from './helpers/world.ts';

/** A request to `served` over a socket, as `token` (none when null). */
async function ask(
  served: ServedApiWorld,
  token: string | null,
  method: string,
  path: string,
  body?: Body,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const answer = await httpAsk(served.url, {
    method,
    path,
    body,
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...headers },
  });
  const all = new Headers();
  for (const [name, value] of Object.entries(answer.headers))
    for (const one of [value ?? []].flat()) all.append(name, one);
  return { status: answer.status, type: all.get('content-type'), headers: all, body: answer.body };
}

/** What a client with a token for `subject`, and one with none, sees of `served`. */
async function asClient(served: ServedApiWorld, subject: string): Promise<Served> {
  const token = await served.token(subject);
  return {
    ask: (method, path, body, headers) => ask(served, token, method, path, body, headers),
    askWithout: (method, path, body) => ask(served, null, method, path, body),
    close: () => served.close(),
  };
}

const SUBJECT = 'deployer';

const binary: ApiSetup = {
  name: 'served by the berth binary over a socket',
  async open() {
    const served = await apiWorld({
      modules: MODULES,
      prepare: (world) => world.rootedNodes(NODES),
    });
    const { world } = served;
    return {
      ...(await asClient(served, SUBJECT)),
      subject: SUBJECT,
      refusal: {
        refused: `berth needs a bearer token from ${served.issuer.url}: send "Authorization: Bearer <token>"`,
        challenge: 'Bearer realm="berth"',
      },
      journal: async () => (await world.journal()) as unknown as Journaled[],
      async assigned(node) {
        const record = JSON.parse(
          await readFile(join(world.state, 'nodes', node, 'record.json'), 'utf8'),
        );
        return record.assigned;
      },
      async placeOn(node, path, content) {
        const full = join(world.rootOf(node), path);
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
      },
      fileOn: (node, path) =>
        readFile(join(world.rootOf(node), path), 'utf8').catch(() => undefined),
      async withoutStores() {
        // A state directory that is not there: berth api starts, and answers each act 503.
        const gone = await makeWorld();
        await rm(gone.state, { recursive: true, force: true });
        const elsewhere = await apiWorld({ world: gone });
        const client = await asClient(elsewhere, SUBJECT);
        return {
          ...client,
          refused: `the stores cannot be opened: the state directory ${gone.state} does not exist; create it, or leave out --state and BERTH_STATE to use the default`,
          async close() {
            await client.close();
            await gone.cleanup();
          },
        };
      },
    };
  },
};

apiSuite(binary);
