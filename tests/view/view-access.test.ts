/**
 * berth view over a real socket, as another local user or a stray page would meet it:
 * nothing under another name than its own, nothing without the printed token, the token
 * spent once for a session cookie that scripts cannot read and other sites cannot send,
 * no route that acts, and a survey asked only by the view's own page.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { needs } from '../helpers/needs.ts';
import { readJournals, runBerth } from '../helpers/world.ts';
import { type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess, type ViewRequest } from './view-process.ts';

describe('berth view: who may see it', () => {
  let fleet: Fleet;
  let view: ViewProcess;
  let cookie: string;
  const get = (path: string, init: ViewRequest = {}) => view.fetch(path, init);
  const withCookie = (path: string, init: ViewRequest = {}) =>
    get(path, { ...init, headers: { cookie, ...init.headers } });

  before(async () => {
    fleet = await makeFleet();
    view = await startView(fleet.world.state);
    cookie = await view.cookie();
  });
  after(async () => {
    await view?.stop();
    await fleet?.world.cleanup();
  });

  it('prints its address under a name of its own, with a fresh name and token each start', async () => {
    assert.match(view.address, /^http:\/\/v-[a-z2-7]{20}\.localhost:\d+\/\?token=[\w-]{43}$/);
    const again = await startView(fleet.world.state);
    try {
      assert.notEqual(again.token, view.token);
      assert.notEqual(again.host.split(':')[0], view.host.split(':')[0]);
      const theirs = await again.fetch('/', { headers: { cookie } });
      assert.equal(theirs.status, 403, 'a session of another view is not this one');
    } finally {
      await again.stop();
    }
  });

  it('shows nothing to a request without the token: 401, words, no node', async () => {
    for (const path of [
      '/',
      '/nodes/web2',
      '/journal',
      '/live',
      '/view.css',
      '/live.js',
      '/nosuch',
    ]) {
      const answer = await get(path);
      const body = await answer.text();
      assert.equal(answer.status, 401, path);
      assert.match(body, /Open that address/);
      assert.doesNotMatch(body, /web1|web2|app\.conf|stylesheet|<script/, path);
    }
  });

  it('refuses a token that is not the one printed, in the URL or the cookie: 403', async () => {
    const wrong = view.token.replace(/^./, (first) => (first === 'a' ? 'b' : 'a'));
    const inUrl = await get(`/?token=${wrong}`);
    assert.equal(inUrl.status, 403);
    assert.equal(inUrl.headers.get('set-cookie'), null);
    assert.match(await inUrl.text(), /not the one berth view printed/);
    const inCookie = await get('/', { headers: { cookie: `${cookie.split('=')[0]}=${wrong}` } });
    assert.equal(inCookie.status, 403);
    assert.doesNotMatch(await inCookie.text(), /web2/);
  });

  it('changes nothing: a page takes GET and HEAD alone, /survey POST alone, in words, and nothing is journaled', async () => {
    const before = await readJournals(fleet.world.state);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      for (const path of ['/', '/nodes/web2', '/journal']) {
        const answer = await withCookie(path, {
          method,
          body: method === 'OPTIONS' ? undefined : 'yes=true',
        });
        assert.equal(answer.status, 405, `${method} ${path}`);
        assert.equal(answer.headers.get('allow'), 'GET, HEAD');
        assert.match(await answer.text(), /changes nothing/);
      }
    }
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      const answer = await withCookie('/survey', { method });
      assert.equal(answer.status, 405, method);
      assert.equal(answer.headers.get('allow'), 'POST');
      if (method !== 'HEAD') assert.match(await answer.text(), /asked with a button/);
    }
    const head = await withCookie('/journal', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.deepEqual(await readJournals(fleet.world.state), before);
  });

  it('lets the page load nothing from elsewhere, be framed by nothing, leak no address', async () => {
    const answer = await withCookie('/');
    const policy = answer.headers.get('content-security-policy') ?? '';
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'self'/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(answer.headers.get('referrer-policy'), 'same-origin');
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
  });

  it('answers bad input with a page of words, never a stack trace', async () => {
    const cases: [string, number, RegExp][] = [
      ['/nodes/web9', 404, /berth does not know node web9; did you mean web1\?/],
      ['/nodes/Web%201', 404, /is not a node name/],
      ['/nodes/@web', 404, /is not a node name/],
      ['/journal?node=..%2Fetc', 400, /a name/],
      [`/journal?module=${'a'.repeat(5000)}`, 414, /at most 2048 characters/],
      ['/nosuch', 404, /no page at/],
    ];
    for (const [path, status, words] of cases) {
      const answer = await withCookie(path);
      const body = await answer.text();
      assert.equal(answer.status, status, path);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(body, words, path);
      assert.doesNotMatch(body, /\bat .*\.(?:m?js|ts):\d+/, 'no stack trace');
    }
  });
});

describe('berth view: its own name, and its printed address once', () => {
  let fleet: Fleet;
  before(async () => {
    fleet = await makeFleet();
  });
  after(() => fleet?.world.cleanup());

  it('answers under its own name alone: any other Host is refused in words that never name it', async () => {
    const view = await startView(fleet.world.state);
    try {
      const cookie = await view.cookie();
      const name = view.host.split(':')[0] as string;
      const others = [
        `127.0.0.1:${view.port}`,
        `localhost:${view.port}`,
        // A name of another site rebound to loopback, and a name like the view's.
        `rebound.example:${view.port}`,
        `v-aaaaaaaaaaaaaaaaaaaa.localhost:${view.port}`,
        `x.${name}:${view.port}`,
      ];
      for (const host of others)
        for (const path of [
          '/',
          '/nodes/web2',
          '/journal',
          '/live',
          '/view.css',
          `/?token=${view.token}`,
        ]) {
          const answer = await view.fetch(path, { headers: { host, cookie } });
          const body = await answer.text();
          assert.equal(answer.status, 403, `${host} ${path}`);
          assert.match(body, /answers only at the address of its own it printed/);
          assert.ok(!body.includes(name), 'the refusal does not tell the name');
          assert.doesNotMatch(body, /web2|app\.conf|stylesheet|<script/);
          assert.equal(answer.headers.get('set-cookie'), null);
        }
      // A Host that is no host at all is no request.
      const broken = await view.fetch('/', {
        headers: { host: `${name}:${view.port}@elsewhere`, cookie },
      });
      assert.equal(broken.status, 400);
      assert.match(
        await broken.text(),
        /^this is not a request berth understands: .*\(invalid_request\)\n$/,
      );
      // An absolute URL naming another host, sent with the view's Host, is refused too.
      const absolute = await view.fetch(`http://127.0.0.1:${view.port}/`, { headers: { cookie } });
      assert.equal(absolute.status, 403);
      // A port forwarded elsewhere (ssh -L 9000:…) keeps the name: the view answers it.
      const forwarded = await view.fetch('/', {
        headers: { host: `${name.toUpperCase()}:9000`, cookie },
      });
      assert.equal(forwarded.status, 200);
    } finally {
      await view.stop();
    }
  });

  it('spends the printed token for a session cookie of another value; the address used again is refused, saying so', async () => {
    const view = await startView(fleet.world.state);
    try {
      const first = await view.fetch(`/nodes/web2?token=${view.token}`);
      assert.equal(first.status, 303);
      assert.equal(first.headers.get('location'), '/nodes/web2');
      const set = first.headers.get('set-cookie') ?? '';
      const [cookie = '', ...flags] = set.split('; ');
      const value = cookie.replace(/^berth_view=/, '');
      assert.match(cookie, /^berth_view=[\w-]{43}$/);
      assert.notEqual(value, view.token, 'the session is not the printed token');
      assert.deepEqual(
        flags.sort(),
        ['HttpOnly', 'Path=/', 'SameSite=Strict'],
        'for this host alone',
      );
      const page = await view.fetch('/', { headers: { cookie } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /web2/);

      // Whoever opens the printed address again (its history, a copy of it) is refused.
      const again = await view.fetch(`/?token=${view.token}`);
      const words = await again.text();
      assert.equal(again.status, 403);
      assert.match(words, /This address was already used/);
      assert.match(words, /already used, at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
      assert.match(words, /start berth view again for a new address/);
      assert.equal(again.headers.get('set-cookie'), null);
      assert.ok(!words.includes(value) && !words.includes(view.token));
      const stillNot = await view.fetch('/', { headers: { cookie: `berth_view=${view.token}` } });
      assert.equal(stillNot.status, 403, 'the printed token is no session');
      // The browser that spent it is only sent on, as it is in already.
      const ownBrowser = await view.fetch(`/journal?token=${view.token}`, { headers: { cookie } });
      assert.equal(ownBrowser.status, 303);
      assert.equal(ownBrowser.headers.get('location'), '/journal');
      assert.equal(ownBrowser.headers.get('set-cookie'), null);
    } finally {
      await view.stop();
    }
  });
});

describe('berth view: what others wrote', () => {
  it('shows a name someone put in the journal as text, never as markup', async () => {
    const fleet = await makeFleet();
    const view = await startView(fleet.world.state);
    try {
      const hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>';
      const refused = await fleet.world.berth('assign', '--', hostile, 'app');
      assert.equal(refused.code, 1, 'refused, and journaled apart from every node');
      const cookie = await view.cookie();
      const body = await (await view.fetch('/journal', { headers: { cookie } })).text();
      assert.ok(
        body.includes(
          '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;',
        ),
        body,
      );
      assert.doesNotMatch(body, /<script>alert|<img src=x/);
    } finally {
      await view.stop();
      await fleet.world.cleanup();
    }
  });
});

describe('berth view: a node that cannot be reached', {
  skip: needs('ssh', 'openssh-client'),
}, () => {
  it('says why on its row and its page, with its code, and offers no command', async () => {
    const fleet = await makeFleet();
    const settings = JSON.parse(await readFile(join(fleet.world.state, 'berth.json'), 'utf8'));
    settings.nodes.gone = { ssh: 'nobody@gone.invalid' };
    await fleet.world.writeSettings(settings);
    assert.equal((await fleet.world.berth('assign', 'gone', 'app')).code, 0);
    // The operator's preview surveys every node, gone too: its refusal is its survey.
    await fleet.world.berth('converge', '@all');
    const view = await startView(fleet.world.state);
    try {
      const cookie = await view.cookie();
      const fleetPage = await (await view.fetch('/', { headers: { cookie } })).text();
      assert.match(
        fleetPage,
        /<a href="\/nodes\/gone">gone<\/a><p class="note">gone cannot be reached: /,
      );
      assert.match(fleetPage, /<td class="cell refused"><span class="mark">refused<\/span><\/td>/);
      assert.match(fleetPage, /<td class="cell update">/, 'the other nodes are shown as they are');
      const answer = await view.fetch('/nodes/gone', { headers: { cookie } });
      const page = await answer.text();
      assert.equal(answer.status, 200);
      assert.match(page, /gone cannot be reached: .*\(unreachable\)/);
      assert.doesNotMatch(page, /--yes --digest/);
    } finally {
      await view.stop();
      await fleet.world.cleanup();
    }
  });
});

describe('berth view: stopping', () => {
  it('ends with 0 on SIGTERM, a page following it live or not', async () => {
    const fleet = await makeFleet();
    const view = await startView(fleet.world.state);
    try {
      const cookie = await view.cookie();
      const following = await view.fetch('/live', { headers: { cookie } });
      assert.equal(following.status, 200);
      // The stream ends with the view, cleanly or cut.
      const ended = following.text().catch(() => 'cut');
      assert.equal(await view.stop(), 0);
      await ended;
    } finally {
      await fleet.world.cleanup();
    }
  });
});

describe('berth view: a state it cannot read', () => {
  it('says what is wrong with berth.json on a page, and goes on serving', async () => {
    const fleet = await makeFleet();
    const view = await startView(fleet.world.state);
    try {
      const cookie = await view.cookie();
      await fleet.world.writeSettings({ nodes: { web1: { root: 'relative/path' } }, grups: {} });
      const answer = await view.fetch('/', { headers: { cookie } });
      const body = await answer.text();
      assert.equal(answer.status, 409);
      assert.match(body, /berth\.json/);
      assert.match(body, /invalid_config/);
      const journal = await view.fetch('/journal', { headers: { cookie } });
      assert.equal(journal.status, 409, 'berth.json says where the journal is');
      assert.match(await journal.text(), /berth\.json/);
      await fleet.world.writeSettings({ nodes: { web1: { root: fleet.world.root } } });
      const mended = await view.fetch('/', { headers: { cookie } });
      assert.equal(mended.status, 200, 'mended, the next page is drawn');
      assert.match(await mended.text(), /web1/);
    } finally {
      await view.stop();
      await fleet.world.cleanup();
    }
  });
});

describe('berth view --listen', () => {
  let fleetState: string;
  let cleanup: () => Promise<void>;
  before(async () => {
    const fleet = await makeFleet();
    fleetState = fleet.world.state;
    cleanup = fleet.world.cleanup;
  });
  after(() => cleanup());

  it('refuses an address off loopback, or one another program holds, saying so', async () => {
    for (const listen of ['0.0.0.0:8082', '192.168.1.5:8082', '[::]:8082', 'example.com:80']) {
      const run = await runBerth(['view', '--listen', listen]);
      assert.equal(run.code, 2, listen);
      assert.match(run.stderr, /loopback alone/);
      assert.match(run.stderr, /ssh -L/);
    }
    const other = await runBerth(['view', '--listen', '127.0.0.2:8082']);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /at 127\.0\.0\.1 and ::1 alone/);
    const taken = await startView(fleetState);
    try {
      const port = new URL(taken.origin).port;
      const second = await runBerth([
        '--state',
        fleetState,
        'view',
        '--listen',
        `127.0.0.1:${port}`,
      ]);
      assert.equal(second.code, 1);
      assert.match(
        second.stderr,
        new RegExp(`^berth view cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
      );
    } finally {
      await taken.stop();
    }
    const bad = await runBerth(['view', '--listen', 'nonsense']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--listen takes host:port/);
  });
});
