/**
 * berth view's node page shows the node's values and where each came from, as `berth nodes
 * NODE` says them, each as text: a value holding markup is never markup.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';
import { startView, type ViewProcess } from './view-process.ts';

describe("berth view: a node's values", () => {
  let world: World;
  let view: ViewProcess;
  before(async () => {
    world = await makeWorld({
      site: {
        description: 'a site',
        values: {
          site_name: { type: 'string' },
          workers: { type: 'integer', default: 2 },
          banner: { type: 'string', default: '' },
        },
        files: {
          '/etc/site.conf': {
            content:
              'server_name {{value site_name}};\nworkers {{value workers}};\n# {{value banner}}\n',
          },
        },
      },
    });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      groups: { web: ['box'] },
      values: {
        '@all': { site_name: 'example.org', banner: '<script>alert(1)</script>' },
        '@web': { workers: 8 },
      },
      run: { '@all': ['site'] },
    });
    view = await startView(world.state);
  });
  after(async () => {
    await view?.stop();
    await world?.cleanup();
  });

  it('lists each value with where it came from, its markup as text', async () => {
    const cookie = await view.cookie();
    const answer = await view.fetch('/nodes/box', { headers: { cookie } });
    assert.equal(answer.status, 200);
    const page = await answer.text();
    assert.match(page, /<h2 id="values-heading">Values<\/h2>/);
    const values = [...page.matchAll(/<li><code>([^<]*)<\/code><\/li>/g)].map((match) => match[1]);
    assert.deepEqual(values, [
      'banner = &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot; (berth.json values.@all)',
      'site_name = &quot;example.org&quot; (berth.json values.@all)',
      'workers = 8 (berth.json values.@web)',
    ]);
    assert.doesNotMatch(page, /<script>alert/);
  });
});
