/**
 * berth view against another local user, in a real browser (Debian's chromium, driven by
 * playwright-core): that user serves pages on another loopback port, and the operator,
 * having opened the view, opens theirs in the same browser. Their server never receives
 * the view's token or cookie; their pages, loading the view's (img, iframe, fetch, a
 * form), run no check on any node and take no lock, while the operator's converge with
 * `--lock-timeout 1s` goes through.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { needs } from '../helpers/needs.ts';
import { checkRuns, type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess } from './view-process.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Whether a page of theirs says each of its loads is over (run in the page: the tests' types have no DOM). */
const loaded = () =>
  (globalThis as unknown as { document: { title: string } }).document.title === 'done';

/** Another user's server on loopback: it records every request, and serves `pages`. */
async function theirServer(pages: Record<string, string>) {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(request);
    const page = pages[new URL(request.url ?? '/', 'http://x').pathname];
    response.writeHead(page === undefined ? 404 : 200, { 'Content-Type': 'text/html' });
    response.end(page ?? 'nothing here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    /** Every request it was sent, as text: its line and all its headers. */
    received: () =>
      seen.map((request) => `${request.method} ${request.url}\n${request.rawHeaders.join('\n')}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A page of theirs that loads the view's pages every way a page can without reading
 * them, then asks it for a survey, by fetch and by a form; its title says `done` after.
 */
function loadingPage(view: string): string {
  const images = ['/?n=1', '/?n=2', '/?n=3', '/?n=4', '/?n=5', '/nodes/web1', '/journal']
    .map((path) => `<img src="${view}${path}">`)
    .join('\n');
  return `<!doctype html><title>theirs</title>
${images}
<iframe src="${view}/"></iframe>
<iframe src="${view}/nodes/web2"></iframe>
<iframe name="sink"></iframe>
<form id="survey" method="post" action="${view}/survey" target="sink">
<input type="hidden" name="check" value="a guess"></form>
<script>
const settled = (promise) => promise.then(() => {}, () => {});
window.addEventListener('load', async () => {
  await settled(fetch('${view}/', { mode: 'no-cors', credentials: 'include' }));
  await settled(fetch('${view}/survey', { method: 'POST', mode: 'no-cors', credentials: 'include', body: 'check=x' }));
  document.querySelector('iframe[name=sink]').addEventListener('load', () => { document.title = 'done'; });
  document.getElementById('survey').submit();
});
</script>`;
}

describe('berth view and another local user, in a browser', {
  skip: needs(CHROMIUM, 'chromium'),
}, () => {
  let fleet: Fleet;
  let view: ViewProcess;
  let browser: Browser;
  let context: BrowserContext;
  let theirs: Awaited<ReturnType<typeof theirServer>>;

  before(async () => {
    fleet = await makeFleet();
    view = await startView(fleet.world.state);
    theirs = await theirServer({
      '/': '<!doctype html><title>theirs</title><p>a page of another user</p>',
      '/loads-the-view': loadingPage(view.origin),
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    context = await browser.newContext();
    // The operator opens the view first: the browser holds its cookie.
    const page = await context.newPage();
    await page.goto(view.address);
    assert.match(await page.content(), /<h1>Fleet<\/h1>/);
    await page.close();
  });
  after(async () => {
    await browser?.close();
    await theirs?.close();
    await view?.stop();
    await fleet?.world.cleanup();
  });

  it("never sends the view's token or cookie to their server, whatever name the operator opens it by", async () => {
    const cookies = await context.cookies();
    assert.equal(cookies.length, 1, JSON.stringify(cookies));
    const [cookie] = cookies;
    assert.equal(cookie?.domain, new URL(view.origin).hostname, 'for the view’s own name alone');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    const page = await context.newPage();
    for (const host of ['127.0.0.1', 'localhost', 'their-site.localhost'])
      for (const path of ['/', '/loads-the-view', '/favicon.ico']) {
        await page.goto(`http://${host}:${theirs.port}${path}`);
        if (path === '/loads-the-view') await page.waitForFunction(loaded);
      }
    await page.close();
    const received = theirs.received();
    assert.ok(received.length >= 9, received.join('\n\n'));
    for (const request of received) {
      assert.ok(!request.includes(view.token), `the token reached them:\n${request}`);
      assert.ok(!request.includes(cookie?.value ?? '?'), `the session reached them:\n${request}`);
      assert.doesNotMatch(request, /berth_view/, request);
    }
  });

  it('runs no check and takes no lock for their pages loading the view’s, and the operator’s converge goes through', async () => {
    const nodes = ['web1', 'web2'];
    const before = await Promise.all(nodes.map((node) => checkRuns(fleet.world, node)));
    const page = await context.newPage();
    let loading = true;
    // Their page loads the view's pages again and again while the operator converges.
    const loads = (async () => {
      let times = 0;
      while (loading || times < 3) {
        await page.goto(`http://127.0.0.1:${theirs.port}/loads-the-view`);
        await page.waitForFunction(loaded);
        times++;
      }
      return times;
    })();
    try {
      for (const node of nodes) {
        const converge = await fleet.world.berth('converge', node, '--lock-timeout', '1s');
        assert.equal(converge.code, 0, converge.stderr);
      }
    } finally {
      loading = false;
    }
    assert.ok((await loads) >= 3);
    await page.close();
    // The operator's two previews ran each check once: their pages ran none.
    const afterwards = await Promise.all(nodes.map((node) => checkRuns(fleet.world, node)));
    assert.deepEqual(
      afterwards,
      before.map((runs) => runs + 1),
    );
  });

  it('runs no check for the operator’s own pages either, read again and again', async () => {
    const before = await checkRuns(fleet.world, 'web1');
    const page = await context.newPage();
    for (const path of ['/', '/nodes/web1', '/journal', '/', '/nodes/web1'])
      await page.goto(`${view.origin}${path}`);
    await page.reload();
    await page.close();
    assert.equal(await checkRuns(fleet.world, 'web1'), before);
  });
});
