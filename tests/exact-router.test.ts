import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HonoBase } from 'hono/hono-base';
import { ExactRouter } from '../src/http/exact-router.ts';

function appOf(routes: (app: HonoBase) => void): HonoBase {
  const app = new HonoBase({ router: new ExactRouter() });
  routes(app);
  return app;
}

async function said(app: HonoBase, method: string, path: string): Promise<string> {
  const answer = await app.request(path, { method });
  return `${answer.status} ${await answer.text()}`;
}

describe('the exact router', () => {
  const app = appOf((app) => {
    app.post('/assign', (c) => c.text('assign'));
    app.post('/take', (c) => c.text('take'));
    app.all('*', (c) => c.text('fallback', 404));
  });

  it('takes a request to the one handler of its method and exact path', async () => {
    assert.equal(await said(app, 'POST', '/assign'), '200 assign');
    assert.equal(await said(app, 'POST', '/take?node=a'), '200 take');
  });

  it('gives everything else to the fallback, and only that', async () => {
    for (const [method, path] of [
      ['GET', '/assign'],
      ['POST', '/assign/'],
      ['POST', '/Assign'],
      ['POST', '/'],
      ['DELETE', '/nope'],
    ] as const)
      assert.equal(await said(app, method, path), '404 fallback', `${method} ${path}`);
  });

  it('without a fallback, leaves the request to Hono’s own not-found', async () => {
    const bare = appOf((app) => app.post('/assign', (c) => c.text('assign')));
    assert.equal(await said(bare, 'POST', '/nope'), '404 404 Not Found');
  });

  it('runs the handlers of one method and path as one chain, in order', async () => {
    const chained = appOf((app) => {
      app.post('/assign', async (c, next) => {
        c.header('X-First', 'yes');
        await next();
      });
      app.post('/assign', (c) => c.text('second'));
    });
    const response = await chained.request('/assign', { method: 'POST' });
    assert.equal(response.headers.get('X-First'), 'yes');
    assert.equal(await response.text(), 'second');
  });

  it('refuses a pattern when the app is built', () => {
    assert.throws(
      () => appOf((app) => app.post('/nodes/:node', (c) => c.text(''))),
      /exact paths only, not \/nodes\/:node/,
    );
    assert.throws(
      () => appOf((app) => app.get('/files/*', (c) => c.text(''))),
      /exact paths only, not \/files\/\*/,
    );
  });
});
