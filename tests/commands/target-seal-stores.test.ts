/**
 * A target's preview is sealed on each node's store by the target's digest. A store that
 * fails then is the stores' failure (stores_unavailable: 503, exit 3) in the store's own
 * words, as everywhere else, not a failure berth did not foresee (internal_error). The
 * hostile party is the store itself: the file store of web2 refuses the sealing write.
 * In process, through the runner both faces use, with the file stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileDeps } from '../../src/cli/deps.ts';
import { openAct } from '../../src/commands/act.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { StoreError } from '../../src/stores/stores.ts';
import { answerOf } from '../../src/words/answer.ts';
import { refusalWords } from '../../src/words/refusals.ts';
import { makeWorld, type World } from '../helpers/world.ts';

describe("a target's preview sealed on stores that fail", () => {
  let world: World;
  before(async () => {
    world = await makeWorld({
      app: { description: 'an app', files: { '/etc/app.conf': { content: 'a\n' } } },
    });
    await world.rootedNodes(['web1', 'web2'], { web: ['web1', 'web2'] });
    assert.equal((await world.berth('assign', '@web', 'app')).code, 0);
  });
  after(() => world?.cleanup());

  it("is the stores' refusal, in the store's words, not an unforeseen failure", async () => {
    const deps = fileDeps({ dir: world.state, createIfMissing: false });
    const openNode = deps.stores.openNode.bind(deps.stores);
    deps.stores = {
      ...deps.stores,
      async openNode(node, act) {
        const store = await openNode(node, act);
        if (node !== 'web2') return store;
        return {
          ...store,
          // The node's own preview is kept; the target's seal over it is refused.
          async keepPreview(preview) {
            if ((preview.basis as { nodeDigest?: string }).nodeDigest !== undefined)
              throw new StoreError('the disk of web2 is full');
            return store.keepPreview(preview);
          },
        };
      },
    };
    const opened = await openAct(
      shapeOf('converge'),
      { node: '@web', module: '', yes: false },
      deps,
      {
        actor: 'tester',
        via: 'cli',
        line: {},
      },
    );
    if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
    const answer = answerOf(await opened.run());
    assert.equal(answer.code, 'stores_unavailable', JSON.stringify(answer));
    assert.match(answer.refused ?? '', /the disk of web2 is full/);
  });
});
