/**
 * A real service: Debian 12's nginx, with a site set up by hand (its own page and a
 * header in the site file), driven through berth on this machine (a node whose root is
 * `/`). There is no systemd here: the module is examples/modules/nginx.json as shipped,
 * its hooks through `service`, which runs the init script; the admin starts and stops
 * nginx the same way. Needs root and the nginx package; skipped otherwise.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type KeptFiles, keepAsFound } from '../helpers/machine-files.ts';
import { needs } from '../helpers/needs.ts';
import { makeWorld, type World } from '../helpers/world.ts';
import { previewThenAct } from './support.ts';

const SITE = '/etc/nginx/sites-available/default';
const PAGE = '/var/www/html/admin.html';
const EXAMPLES = resolve(import.meta.dirname, '../../examples/modules');
const unavailable =
  process.getuid?.() !== 0
    ? 'needs root'
    : needs('nginx', 'nginx') ||
      needs('curl', 'curl') ||
      (!existsSync(SITE) && `needs ${SITE}: apt-get install nginx`);

const EXAMPLE = JSON.parse(readFileSync(join(EXAMPLES, 'nginx.json'), 'utf8'));
const { start: START, stop: STOP } = EXAMPLE as { start: string; stop: string };

function sh(script: string) {
  execFileSync('sh', ['-c', script], { stdio: 'ignore' });
}

/** The response to GET path, headers and body, or undefined when nginx does not answer. */
async function get(path: string): Promise<string | undefined> {
  for (let i = 0; i < 30; i++) {
    try {
      return execFileSync('curl', ['-fsS', '-i', `http://127.0.0.1${path}`], { encoding: 'utf8' });
    } catch {
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return undefined;
}

describe('nginx, set up by hand, driven through berth', () => {
  let world: World;
  let machines: KeptFiles | undefined;
  let adminSite: string;

  before(async () => {
    if (unavailable) return;
    machines = keepAsFound(SITE, PAGE);
    const original = readFileSync(SITE);
    sh(STOP);
    // The admin: a page of their own, and the site says who serves it.
    adminSite = original
      .toString('utf8')
      .replace('server_name _;', 'server_name _;\n\tadd_header X-Served-By admin;');
    await writeFile(SITE, adminSite);
    await writeFile(PAGE, 'made by the admin\n');
    sh(START);
    assert.match((await get('/admin.html')) ?? '', /X-Served-By: admin/);

    world = await makeWorld();
    await world.writeSettings({ nodes: { host: { root: '/' } } });
    await world.writeModule('nginx', EXAMPLE);
    await mkdir(join(world.state, 'modules', 'nginx'), { recursive: true });
    copyFileSync(
      join(EXAMPLES, 'nginx', 'default'),
      join(world.state, 'modules', 'nginx', 'default'),
    );
  });

  after(async () => {
    if (unavailable) return;
    try {
      sh(STOP);
    } finally {
      machines?.giveBack();
      await world?.cleanup();
    }
  });

  const act = (...args: string[]) => previewThenAct(world, ...args);

  it('take shows the site berth would write, with its diff; converge writes it and reload makes it live', {
    skip: unavailable,
  }, async () => {
    assert.equal((await world.berth('adopt', 'host')).code, 0);
    const take = await act('take', 'host', 'nginx');
    assert.match(take.preview, /check: passes, so nginx is taken as running/);
    assert.match(take.preview, /file \/etc\/nginx\/sites-available\/default: differs/);
    // The package's site file is mostly comments: the diff counts them, shows the settings
    // that change first, and folds each run of comments to a line.
    assert.match(take.preview, /\n {4}--- \/etc\/nginx\/sites-available\/default on host\n/);
    assert.match(take.preview, /\n {4}\(\+\d+ −\d+ lines: \d+ of them comments or blank\)\n/);
    assert.match(take.preview, /\n {4}-\tadd_header X-Served-By admin;\n/);
    assert.match(take.preview, /\n {4}@@ [^\n]+ @@ only comments or blank lines: \+\d+ −\d+\n/);
    const converge = await act('converge', 'host');
    assert.match(converge.said, /ran reload of nginx/);
    // nginx -s reload signals the master: new workers take the site a moment later.
    let response = '';
    for (let i = 0; i < 30; i++) {
      response = (await get('/admin.html')) ?? '';
      if (!/X-Served-By/.test(response)) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    assert.match(response, /made by the admin/);
    assert.doesNotMatch(response, /X-Served-By/, 'the site berth wrote is live');
    const info = statSync(SITE);
    assert.deepEqual([info.uid, info.gid, info.mode & 0o777], [0, 0, 0o644]);
  });

  it('the check fails when nginx is stopped, and converge starts it again', {
    skip: unavailable,
  }, async () => {
    sh(STOP);
    const { preview } = await act('converge', 'host');
    assert.match(preview, /start nginx: its check fails \(exit \d+: /);
    assert.match((await get('/admin.html')) ?? '', /made by the admin/);
  });

  it("release stops it; the admin's page stays", { skip: unavailable }, async () => {
    assert.equal((await world.berth('unassign', 'host', 'nginx')).code, 0);
    const { said } = await act('converge', 'host');
    assert.match(said, /ran stop of nginx/);
    assert.equal(await readFile(PAGE, 'utf8'), 'made by the admin\n');
  });
});
