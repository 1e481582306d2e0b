/**
 * Reading runs nothing: a page of berth view shows each node's newest survey (any
 * preview's, by anyone) and its age, and reaches no node; a survey is asked by the view's
 * own page alone (Origin, Sec-Fetch-Site, the page's token), one at a time. The module's
 * check counts its runs in a file on the node.
 */
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { fileStores } from '../../src/stores/file-store.ts';
import { checkRuns, type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess } from './view-process.ts';

/** The page token a page of the view carries in its survey form. */
function pageToken(page: string): string {
  const token = /<input type="hidden" name="check" value="([\w-]+)">/.exec(page)?.[1];
  assert.ok(token, 'the page has its survey form');
  return token;
}

describe('berth view: reading runs nothing, a survey is asked', () => {
  let fleet: Fleet;
  let view: ViewProcess;
  let cookie: string;
  /** The page token, read from the fleet page as a browser would. */
  let token: string;
  const surveys = () =>
    fileStores({ dir: fleet.world.state, createIfMissing: false }).readSurveys();
  const runs = async () => [
    await checkRuns(fleet.world, 'web1'),
    await checkRuns(fleet.world, 'web2'),
  ];
  /** A survey asked as the view's own page asks it, with what `change` changes. */
  const ask = (form: string, change: Record<string, string | undefined> = {}) => {
    const headers: Record<string, string> = {
      cookie,
      origin: view.origin,
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/x-www-form-urlencoded',
    };
    for (const [name, value] of Object.entries(change))
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    return view.fetch('/survey', { method: 'POST', headers, body: form });
  };

  before(async () => {
    fleet = await makeFleet();
    view = await startView(fleet.world.state);
    cookie = await view.cookie();
  });
  after(async () => {
    await view?.stop();
    await fleet?.world.cleanup();
  });

  it("shows each node's newest survey, its age and who made it, and runs no check to do so", async () => {
    const before = await runs();
    for (let round = 0; round < 3; round++)
      for (const path of ['/', '/nodes/web1', '/nodes/web2', '/nodes/web3', '/journal'])
        for (const method of ['GET', 'HEAD']) {
          const answer = await view.fetch(path, { method, headers: { cookie } });
          assert.equal(answer.status, 200, `${method} ${path}`);
          await answer.arrayBuffer();
        }
    assert.deepEqual(await runs(), before, 'no page ran a check');
    const page = await (await view.fetch('/', { headers: { cookie } })).text();
    const user = userInfo().username;
    assert.match(
      page,
      new RegExp(
        `<td class="surveyed"><time datetime="[^"]+" title="[^"]+ UTC">\\d+ seconds? ago</time> by ${user} \\(cli\\)</td>`,
      ),
    );
    assert.match(page, /<td class="cell update">/);
    const node = await (await view.fetch('/nodes/web2', { headers: { cookie } })).text();
    assert.match(
      node,
      /Surveyed <time[^>]*>\d+ seconds? ago<\/time> by \S+ \(cli\): what <code>berth converge web2<\/code> would do then/,
    );
    assert.match(node, /<span class="diff-add"> {4}\+port=80<\/span>/);
    assert.match(node, /converge web2 --yes --digest [0-9a-f]{64}/);
  });

  it('refuses a survey asked from anywhere but its own page, in words, and runs nothing', async () => {
    token = pageToken(await (await view.fetch('/', { headers: { cookie } })).text());
    const before = { runs: await runs(), surveys: await surveys() };
    const refusals: [string, Record<string, string | undefined>, string, RegExp][] = [
      [
        'another origin',
        { origin: 'http://127.0.0.1:9' },
        `check=${token}`,
        /comes from &quot;http:\/\/127\.0\.0\.1:9&quot;/,
      ],
      [
        'no origin',
        { origin: undefined },
        `check=${token}`,
        /a page that does not say where it is/,
      ],
      [
        'another site',
        { 'sec-fetch-site': 'cross-site' },
        `check=${token}`,
        /says it comes from &quot;cross-site&quot;/,
      ],
      [
        'the same site',
        { 'sec-fetch-site': 'same-site' },
        `check=${token}`,
        /says it comes from &quot;same-site&quot;/,
      ],
      ['no Sec-Fetch-Site', { 'sec-fetch-site': undefined }, `check=${token}`, /no site it names/],
      ['no page token', {}, '', /does not carry the token of the page/],
      [
        'another page token',
        {},
        `check=${token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}`,
        /does not carry the token/,
      ],
      [
        'not a form',
        { 'content-type': 'application/json' },
        JSON.stringify({ check: token }),
        /does not carry the token/,
      ],
    ];
    for (const [what, change, form, words] of refusals) {
      const answer = await ask(form, change);
      const body = await answer.text();
      assert.equal(answer.status, 403, what);
      assert.match(body, /Not asked from the view’s own page/, what);
      assert.match(body, words, what);
    }
    const withoutCookie = await ask(`check=${token}`, { cookie: undefined });
    assert.equal(withoutCookie.status, 401);
    assert.deepEqual(await runs(), before.runs, 'no check ran');
    assert.deepEqual(await surveys(), before.surveys, 'no survey was made');
  });

  it('surveys the fleet, or a node, when its own page asks: each check once, then the page', async () => {
    token = pageToken(await (await view.fetch('/', { headers: { cookie } })).text());
    const before = { runs: await runs(), surveys: await surveys() };
    const fleetAsked = await ask(`check=${token}`);
    assert.equal(fleetAsked.status, 303, await fleetAsked.text());
    assert.equal(fleetAsked.headers.get('location'), '/');
    assert.deepEqual(
      await runs(),
      before.runs.map((n) => n + 1),
      'each started node checked once',
    );
    const after = await surveys();
    assert.deepEqual(
      after.map((survey) => survey.node),
      ['db1', 'web1', 'web2', 'web3'],
    );
    for (const [index, survey] of after.entries()) {
      assert.ok(survey.at > (before.surveys[index]?.at ?? ''), `${survey.node} surveyed anew`);
      assert.equal(survey.via, 'cli');
    }
    const nodeAsked = await ask(`check=${token}&node=web2`);
    assert.equal(nodeAsked.status, 303);
    assert.equal(nodeAsked.headers.get('location'), '/nodes/web2');
    assert.deepEqual(await runs(), [
      (before.runs[0] as number) + 1,
      (before.runs[1] as number) + 2,
    ]);
    const bad = await ask(`check=${token}&node=..%2Fetc`);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Not a node to survey/);
    const unknown = await ask(`check=${token}&node=web9`);
    assert.equal(unknown.status, 409);
    assert.match(await unknown.text(), /berth does not know node web9; did you mean web1\?/);
  });

  it('surveys one thing at a time: a second asked meanwhile is refused in words, not queued', async () => {
    token = pageToken(await (await view.fetch('/', { headers: { cookie } })).text());
    // Another berth's act holds web1's lock: the view's survey waits for it.
    const stores = fileStores({ dir: fleet.world.state, createIfMissing: false });
    const held = await stores.openNode('web1', 'converge');
    let first: Promise<Response> | undefined;
    try {
      first = ask(`check=${token}`);
      // Until the survey has begun, a second is not refused: wait for the page to say it.
      let page = '';
      while (!page.includes('under way'))
        page = await (await view.fetch('/', { headers: { cookie } })).text();
      assert.match(
        page,
        /A survey of @all is under way, asked <time[^>]*>\d+ seconds? ago<\/time>/,
      );
      assert.doesNotMatch(page, /<form class="survey"/, 'no button while it runs');
      const second = await ask(`check=${token}&node=web2`);
      const words = await second.text();
      assert.equal(second.status, 409);
      assert.match(words, /A survey is under way/);
      assert.match(words, /surveys one thing at a time, and is surveying @all/);
    } finally {
      await held.close();
    }
    const answer = await first;
    assert.equal(answer?.status, 303);
    const page = await (await view.fetch('/', { headers: { cookie } })).text();
    assert.match(page, /<form class="survey"/, 'the button is back');
  });
});
