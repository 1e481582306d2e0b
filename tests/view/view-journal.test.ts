/**
 * berth view's journal page: an act of the state itself (the state's CA, made by `berth
 * ca`) is said as the state's, with no link to a node of no name; a node's act links to
 * the journal of its node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';
import { startView, type ViewProcess } from './view-process.ts';

describe("berth view: the journal's acts of the state and of nodes", () => {
  let world: World;
  let view: ViewProcess;
  before(async () => {
    world = await makeWorld({ site: { description: 'a site' } });
    await world.writeSettings({ nodes: { box: { root: world.root } } });
    assert.equal((await world.berth('ca')).code, 0);
    assert.equal((await world.berth('assign', 'box', 'site')).code, 0);
    view = await startView(world.state);
  });
  after(async () => {
    await view?.stop();
    await world?.cleanup();
  });

  it("names the state for the CA's act, and links a node's act to its node", async () => {
    const cookie = await view.cookie();
    const answer = await view.fetch('/journal', { headers: { cookie } });
    assert.equal(answer.status, 200);
    const page = await answer.text();
    const rows = [...page.matchAll(/<td>(ca|assign)<\/td>\n<td>(.*)<\/td>/g)].map((match) => [
      match[1],
      match[2],
    ]);
    assert.deepEqual(rows, [
      ['assign', '<a href="/journal?node=box">box</a>'],
      ['ca', '<span class="none">the state</span>'],
    ]);
    assert.doesNotMatch(page, /href="\/journal\?node="/);
  });
});
