/**
 * berth view in a real browser: Debian's chromium, headless, driven by playwright-core. The
 * fleet's matrix, a node's diff with its secret masked, the journal, a group act followed
 * live to its end and the fleet surveyed again with the page's button, and nothing asked
 * of another origin; landmarks, and every text's contrast in light and dark measured from
 * its computed colours. Screenshots at a phone's and a desk's size are written to
 * .view-shots/ (or $BERTH_VIEW_SHOTS), named in the output.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { needs } from '../helpers/needs.ts';
import {
  contrastFailures,
  contrastRatio,
  effectiveBackground,
  type ShownText,
} from './contrast.ts';
import { checkRuns, type Fleet, makeFleet } from './fleet.ts';
import { startView, type ViewProcess } from './view-process.ts';

const CHROMIUM = '/usr/bin/chromium';

/** The page's globals, as the functions sent into the browser use them (the tests' types have no DOM). */
interface InPage {
  document: {
    getElementById(id: string): { textContent: string | null } | null;
    querySelector(selector: string): { textContent: string | null } | null;
    documentElement: { scrollWidth: number };
  };
  getComputedStyle(element: unknown): { backgroundColor: string };
}

/** An element as the contrast walk and the landmark check read it in the page. */
interface InPageElement {
  tagName: string;
  className: string;
  childNodes: ArrayLike<{ nodeType: number; textContent: string | null }>;
  parentElement: InPageElement | null;
  labels?: ArrayLike<{ textContent: string | null }> | null;
  checkVisibility(): boolean;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
}
interface InPageWalk {
  document: { querySelectorAll(selector: string): ArrayLike<InPageElement> };
  getComputedStyle(element: InPageElement): {
    color: string;
    backgroundColor: string;
    fontSize: string;
    fontWeight: string;
    borderTopColor: string;
  };
}
/** The pages the reader sees: the fleet, a node with its diff, the journal. */
const PAGES = ['/', '/nodes/web2', '/journal'] as const;
const SHOTS = resolve(
  process.env.BERTH_VIEW_SHOTS ?? join(import.meta.dirname, '../../.view-shots'),
);
const PHONE = { width: 390, height: 844 };
const DESK = { width: 1280, height: 800 };

describe('berth view in a browser', { skip: needs(CHROMIUM, 'chromium') }, () => {
  let fleet: Fleet;
  let view: ViewProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const asked: string[] = [];

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    fleet = await makeFleet();
    view = await startView(fleet.world.state);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    });
    context = await browser.newContext({ viewport: DESK });
    context.on('request', (request) => asked.push(request.url()));
    page = await context.newPage();
    await page.goto(view.address);
  });
  after(async () => {
    await browser?.close();
    await view?.stop();
    await fleet?.world.cleanup();
  });

  const shoot = async (name: string, at: Page = page) => {
    const path = join(SHOTS, `${name}.png`);
    await at.screenshot({ path, fullPage: true });
    return path;
  };

  it('leaves the token out of the address once in', () => {
    assert.equal(page.url(), `${view.origin}/`);
  });

  it('shows web1 in sync, web2 to update with what drifted, web3 to install, db1 blocked', async (t) => {
    const cells = (node: string) =>
      page.locator('tbody tr', { has: page.locator('th a', { hasText: node }) }).locator('td.cell');
    const cell = (node: string) => cells(node).first();
    assert.deepEqual(await page.locator('thead th').allTextContents(), [
      'Node',
      'app',
      'cache',
      'Surveyed',
      'Live',
    ]);
    assert.deepEqual(await cells('web1').allTextContents(), ['in sync', 'in sync']);
    assert.match(
      (await cell('web2').textContent()) ?? '',
      /^to update.*write \/etc\/app\/app\.conf/,
    );
    assert.match((await cell('web3').textContent()) ?? '', /^to install/);
    assert.equal(await cell('db1').textContent(), 'not run');
    assert.match(
      (await cells('db1').nth(1).textContent()) ?? '',
      /^blocked.*db1 holds cache's data \(\/var\/lib\/cache\) but berth does not manage cache/,
    );
    assert.match(
      (await page.locator('.lede').textContent()) ?? '',
      /2 in sync, 1 to install, 1 to update, 1 blocked/,
    );
    // The colours say it too, not only the words.
    const colour = async (node: string) =>
      cell(node)
        .locator('.mark')
        .evaluate(
          (mark) => (globalThis as unknown as InPage).getComputedStyle(mark).backgroundColor,
        );
    const colours = new Set(
      await Promise.all(['web1', 'web2', 'web3'].map((node) => colour(node))),
    );
    assert.equal(colours.size, 3);
    t.diagnostic(`screenshots in ${SHOTS}: ${await shoot('fleet-desk')}`);
  });

  it("shows a node's diff in colour with the secret masked, never its value", async () => {
    await page.getByRole('link', { name: 'web2' }).click();
    await page.waitForURL(`${view.origin}/nodes/web2`);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'web2');
    const lines = (kind: string) => page.locator(`pre.preview .${kind}`).allTextContents();
    assert.deepEqual(await lines('diff-del'), ['    -port=8080']);
    assert.deepEqual(await lines('diff-add'), ['    +port=80']);
    assert.ok((await lines('diff-context')).includes('     token=[secret token]'));
    const background = (kind: string) =>
      page
        .locator(`pre.preview .${kind}`)
        .first()
        .evaluate(
          (line) => (globalThis as unknown as InPage).getComputedStyle(line).backgroundColor,
        );
    assert.notEqual(await background('diff-add'), await background('diff-del'));
    assert.ok(fleet.secret.length >= 20);
    assert.ok(
      !(await page.content()).includes(fleet.secret),
      'the secret value is nowhere in the page',
    );
    const command = (await page.locator('pre.command').textContent()) ?? '';
    assert.match(command, /^berth --state \S+ converge web2 --yes --digest [0-9a-f]{64}$/);
    await shoot('node-desk');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shoot('node-desk-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('reads on a phone: the page is as wide as the screen, the matrix scrolls within it', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize(PHONE);
    for (const [path, name] of [
      ['/', 'fleet-phone'],
      ['/nodes/web2', 'node-phone'],
      ['/journal', 'journal-phone'],
    ] as const) {
      await phone.goto(`${view.origin}${path}`);
      const wide = await phone.evaluate(
        () => (globalThis as unknown as InPage).document.documentElement.scrollWidth,
      );
      assert.ok(wide <= PHONE.width, `${path} is ${wide} px wide on a ${PHONE.width} px phone`);
      await shoot(name, phone);
    }
    await phone.close();
  });

  it('lists the journal newest first, filtered by node', async () => {
    await page.goto(`${view.origin}/journal`);
    await page.getByLabel('Node').fill('web1');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/journal\?node=web1/);
    const rows = page.locator('tbody tr');
    assert.deepEqual(
      (await rows.locator('td:nth-child(3)').allTextContents()).map((act) => act.trim()),
      ['converge', 'assign', 'assign'],
      'web1 was assigned app and cache, then converged',
    );
    assert.deepEqual(await rows.locator('td:nth-child(5)').allTextContents(), ['', 'cache', 'app']);
    assert.match((await rows.first().locator('td:nth-child(2)').textContent()) ?? '', /\(cli\)/);
    assert.match((await rows.first().locator('.outcome').textContent()) ?? '', /^done/);
    await shoot('journal-desk');
  });

  it('has text readable in light and dark: 4.5:1 against its background, 3:1 when large', async () => {
    const reader = await context.newPage();
    const failures: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await reader.emulateMedia({ colorScheme });
      for (const path of PAGES) {
        await reader.goto(`${view.origin}${path}`);
        const texts: ShownText[] = await reader.evaluate(() => {
          const { document, getComputedStyle } = globalThis as unknown as InPageWalk;
          // What a reader opens is read too.
          for (const details of Array.from(document.querySelectorAll('details')))
            details.setAttribute('open', '');
          const shown: ShownText[] = [];
          for (const element of Array.from(document.querySelectorAll('body *'))) {
            const text = Array.from(element.childNodes)
              .filter((node) => node.nodeType === 3)
              .map((node) => node.textContent ?? '')
              .join('')
              .trim();
            if (!text || !element.checkVisibility()) continue;
            const style = getComputedStyle(element);
            const backgrounds: string[] = [];
            for (let at: InPageElement | null = element; at; at = at.parentElement)
              backgrounds.push(getComputedStyle(at).backgroundColor);
            shown.push({
              tag: element.tagName.toLowerCase(),
              className: element.className,
              text,
              color: style.color,
              backgrounds,
              fontSize: Number.parseFloat(style.fontSize),
              fontWeight: Number(style.fontWeight),
            });
          }
          return shown;
        });
        assert.ok(texts.length > 5, `${path} shows text`);
        failures.push(
          ...contrastFailures(texts).map((failure) => `${colorScheme} ${path} ${failure}`),
        );
      }
    }
    await reader.close();
    assert.deepEqual(failures, [], `text below its contrast:\n${failures.join('\n')}`);
  });

  it('has form controls whose edges show: 3:1 against what is behind them, light and dark', async () => {
    const reader = await context.newPage();
    const failures: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await reader.emulateMedia({ colorScheme });
      for (const path of PAGES) {
        await reader.goto(`${view.origin}${path}`);
        const controls = await reader.evaluate(() => {
          const { document, getComputedStyle } = globalThis as unknown as InPageWalk;
          return Array.from(document.querySelectorAll('input:not([type=hidden]), button')).map(
            (element) => {
              const backgrounds: string[] = [];
              for (let at = element.parentElement; at; at = at.parentElement)
                backgrounds.push(getComputedStyle(at).backgroundColor);
              return {
                what: `<${element.tagName.toLowerCase()}> ${element.getAttribute('name') ?? ''}`,
                border: getComputedStyle(element).borderTopColor,
                backgrounds,
              };
            },
          );
        });
        assert.ok(
          controls.length >= (path === '/journal' ? 3 : 1),
          `${path} has its filter boxes and button, or its survey button`,
        );
        for (const control of controls) {
          const ratio = contrastRatio(
            effectiveBackground([control.border]),
            effectiveBackground(control.backgrounds),
          );
          if (ratio < 3)
            failures.push(`${colorScheme} ${path} ${control.what}: ${ratio.toFixed(2)}:1`);
        }
      }
    }
    await reader.close();
    assert.deepEqual(failures, [], `form control edges below 3:1:\n${failures.join('\n')}`);
  });

  it('has landmarks: one main, a named nav, named tables, labelled form controls', async () => {
    const reader = await context.newPage();
    for (const path of PAGES) {
      await reader.goto(`${view.origin}${path}`);
      assert.equal(await reader.getByRole('main').count(), 1, `${path} has one main`);
      const navs = await reader.getByRole('navigation').count();
      assert.ok(navs >= 1, `${path} has a nav`);
      assert.equal(
        await reader.getByRole('navigation', { name: /\S/ }).count(),
        navs,
        `${path}: each nav has a name`,
      );
      const tables = await reader.locator('table').count();
      assert.equal(
        await reader.getByRole('table', { name: /\S/ }).count(),
        tables,
        `${path}: each table has a caption or a label`,
      );
      const unlabelled = await reader.evaluate(() => {
        const { document } = globalThis as unknown as InPageWalk;
        return Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea'))
          .filter(
            (control) =>
              !Array.from(control.labels ?? []).some((label) => label.textContent?.trim()) &&
              !control.getAttribute('aria-label')?.trim() &&
              !control.getAttribute('aria-labelledby'),
          )
          .map((control) => control.getAttribute('name') ?? control.tagName);
      });
      assert.deepEqual(unlabelled, [], `${path}: form controls without a label`);
    }
    await reader.goto(`${view.origin}/journal`);
    for (const name of ['Node', 'Module'])
      assert.equal(
        await reader.getByRole('textbox', { name }).count(),
        1,
        `the journal's filter has ${name}`,
      );
    assert.equal(await reader.getByRole('search', { name: 'Filter the journal' }).count(), 1);
    await reader.close();
  });

  it('follows a group act from another berth to its end, without a reload', async () => {
    await page.goto(`${view.origin}/`);
    await page.waitForFunction(() =>
      (globalThis as unknown as InPage).document
        .getElementById('live-state')
        ?.textContent?.startsWith('Following'),
    );
    const preview = await fleet.world.berth('converge', '@web');
    assert.equal(preview.code, 0, preview.stderr);
    const act = await fleet.world.actOn(preview, 'converge', '@web');
    assert.equal(act.code, 0, act.stderr);
    for (const node of ['web1', 'web2', 'web3'])
      await page.waitForFunction(
        (name) =>
          (globalThis as unknown as InPage).document.querySelector(`td.now[data-node="${name}"]`)
            ?.textContent === 'done',
        node,
      );
    const log = await page.locator('#live-log li').allTextContents();
    for (const node of ['web1', 'web2', 'web3'])
      assert.ok(
        log.some((line) => line.startsWith(`${node}: converge by `) && line.endsWith(': done')),
        log.join('\n'),
      );
    assert.match((await page.locator('#live-state').textContent()) ?? '', /survey again/);
    await shoot('fleet-live-desk');
    // Read again, the page shows the surveys from before the act, and says so, node by node.
    await page.reload();
    assert.match(
      (await page.locator('td.surveyed').first().textContent()) ?? '',
      /Acted on since: converge by .+ \(cli\), done/,
    );
    const checks = await checkRuns(fleet.world, 'web1');
    await page.getByRole('button', { name: 'Survey the fleet again' }).click();
    await page.waitForURL(`${view.origin}/`);
    assert.equal(await checkRuns(fleet.world, 'web1'), checks + 1, 'surveyed once, by the button');
    assert.equal(await page.locator('.stale').count(), 0);
    const cells = await page.locator('td.cell').allTextContents();
    assert.deepEqual(cells.slice(0, 6), [
      'in sync',
      'in sync',
      'in sync',
      'not run',
      'in sync',
      'not run',
    ]);
  });

  it('asked nothing of another origin', () => {
    assert.ok(asked.length > 10);
    const elsewhere = asked.filter((url) => !url.startsWith(`${view.origin}/`));
    assert.deepEqual(elsewhere, []);
  });
});
