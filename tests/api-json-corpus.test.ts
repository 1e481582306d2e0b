/**
 * Every body of the JSONTestSuite corpus (`../shared/jsontestsuite`, beside the project) as
 * a request to the Command API: each gets a clear answer in words, and none changes the
 * state: "not a request berth understands" with the decoder's reason, the shape rules'
 * words, or 413 for a body over 64 KiB. A body a parser must refuse (n_) is never taken
 * for JSON.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type App, appOver, ask } from './helpers/api.ts';
import { makeWorld, type World } from './helpers/world.ts';

const CORPUS = join(import.meta.dirname, '../../shared/jsontestsuite');
const NOT_UNDERSTOOD = 'this is not a request berth understands: ';
const SHAPE = ['both node and module are needed', 'node is needed'];
const TOO_LARGE = 'the request body is larger than berth reads (64 KiB)';

describe('the JSONTestSuite corpus as request bodies', {
  skip: !existsSync(CORPUS) && `no corpus at ${CORPUS}: the project's ../shared is not beside it`,
}, () => {
  let world: World;
  let app: App;
  before(async () => {
    world = await makeWorld({ m: { description: 'a module' } });
    app = appOver(world.state);
  });
  after(() => world.cleanup());

  it('answers every body with a refusal in words, and keeps the state as it was', async () => {
    const names = (await readdir(CORPUS)).filter((name) => name.endsWith('.json')).sort();
    assert.ok(names.length > 300, `the corpus holds ${names.length} bodies`);
    const unclear: string[] = [];
    for (const name of names) {
      const body = new Uint8Array(await readFile(join(CORPUS, name)));
      const answer = await ask(app, 'POST', '/assign', body, {
        'content-type': 'application/json',
      });
      const refused = String((answer.body as { refused?: unknown } | undefined)?.refused ?? '');
      const decoded = refused.startsWith(NOT_UNDERSTOOD) && refused.length > NOT_UNDERSTOOD.length;
      const shaped = SHAPE.includes(refused);
      const tooLarge = answer.status === 413 && refused === TOO_LARGE;
      // A body a parser must refuse is never taken for JSON (never refused for its shape).
      const clear =
        answer.type === 'application/json' &&
        (tooLarge || (answer.status === 400 && (decoded || (shaped && !name.startsWith('n_')))));
      if (!clear) unclear.push(`${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    assert.deepEqual(unclear, []);
    assert.deepEqual(
      await world.readState(),
      { accounts: {}, assignments: {}, managed: {} },
      'no node was written',
    );
  });
});
