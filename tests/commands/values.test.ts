/**
 * Values and facts on rooted nodes, through the real binary: what differs from node to node
 * (berth.json's `values` by `@all`, group and node), what a module declares and reads, the
 * facts of a node, and what berth says of each — in the files it writes, the environment of
 * its hooks, its digests, `berth nodes` and `berth validate`.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { machine, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { makeWorld, type World } from '../helpers/world.ts';

/** A site whose file reads two values, and whose start writes what it sees. */
const SITE = {
  description: 'a site',
  values: {
    site_name: { type: 'string', description: 'the name it answers to' },
    workers: { type: 'integer', default: 2, description: 'how many workers' },
    tls: { type: 'boolean', default: false },
  },
  files: {
    '/etc/site.conf': {
      content: 'server_name {{value site_name}};\nworkers {{value workers}};\ntls {{value tls}};\n',
    },
  },
  start:
    'printf "%s|%s|%s\\n" "$BERTH_VALUE_SITE_NAME" "$BERTH_VALUE_WORKERS" "$BERTH_VALUE_TLS" > "$BERTH_ROOT/started"',
};

/** berth.json: web1 and web2 in @web, db1 in none; values by @all, @web and web1. */
function fleetSettings(world: World, values: unknown, groups: unknown = { web: ['web1', 'web2'] }) {
  return world.writeSettings({
    nodes: Object.fromEntries(
      ['web1', 'web2', 'db1'].map((node) => [node, { root: world.rootOf(node) }]),
    ),
    groups,
    values,
    run: { '@all': ['site'] },
  });
}

const VALUES = {
  '@all': { site_name: 'example.org', workers: 4 },
  '@web': { workers: 8 },
  web1: { site_name: 'www.example.org' },
};

async function converge(world: World, target: string) {
  const preview = await world.berth('converge', target);
  assert.equal(preview.code, 0, preview.stderr);
  const act = await world.actOn(preview, 'converge', target);
  assert.equal(act.code, 0, `${act.stdout}${act.stderr}`);
  return { preview, act };
}

describe('values by @all, group and node', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ site: SITE });
    for (const node of ['web1', 'web2', 'db1'])
      await mkdir(world.rootOf(node), { recursive: true });
    await fleetSettings(world, VALUES);
  });
  afterEach(() => world.cleanup());

  it("writes a node's own value, else its group's, else @all's, else the module's default", async () => {
    await converge(world, '@all');
    const conf = (node: string) => readFile(join(world.rootOf(node), 'etc/site.conf'), 'utf8');
    assert.equal(await conf('web1'), 'server_name www.example.org;\nworkers 8;\ntls false;\n');
    assert.equal(await conf('web2'), 'server_name example.org;\nworkers 8;\ntls false;\n');
    assert.equal(await conf('db1'), 'server_name example.org;\nworkers 4;\ntls false;\n');
    const started = (node: string) => readFile(join(world.rootOf(node), 'started'), 'utf8');
    assert.equal(await started('web1'), 'www.example.org|8|false\n');
    assert.equal(await started('db1'), 'example.org|4|false\n');
  });

  it('berth nodes NODE says each value and where it came from, --json too', async () => {
    const web1 = await world.berth('nodes', 'web1');
    assert.equal(web1.code, 0, web1.stderr);
    assert.deepEqual(web1.stdout.trim().split('\n').slice(1), [
      '  site_name = "www.example.org" (berth.json values.web1)',
      '  tls = false (the default of site)',
      '  workers = 8 (berth.json values.@web)',
    ]);
    const db1 = await world.berth('nodes', 'db1', '--json');
    assert.equal(db1.code, 0, db1.stderr);
    assert.deepEqual(JSON.parse(db1.stdout).nodes[0].values, [
      { name: 'site_name', value: 'example.org', from: { values: '@all' }, readBy: ['site'] },
      { name: 'tls', value: false, from: { default: 'site' }, readBy: ['site'] },
      { name: 'workers', value: 4, from: { values: '@all' }, readBy: ['site'] },
    ]);
    // The whole inventory stays a line a node; its values are in --json.
    const all = await world.berth('nodes');
    assert.equal(all.stdout.trim().split('\n').length, 3, all.stdout);
  });

  it('berth modules NAME says the values a module reads, each with its type and default', async () => {
    const shown = await world.berth('modules', 'site');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /\n {2}values: site_name \(string, required: the name it answers to\), workers \(integer, default 2: how many workers\), tls \(boolean, default false\)\n/,
    );
    const json = JSON.parse((await world.berth('modules', 'site', '--json')).stdout);
    assert.deepEqual(json.modules[0].values, [
      { name: 'site_name', type: 'string', description: 'the name it answers to' },
      { name: 'workers', type: 'integer', default: 2, description: 'how many workers' },
      { name: 'tls', type: 'boolean', default: false, description: '' },
    ]);
  });

  it('refuses berth.json where two groups of a node disagree, naming both, until the node gives it', async () => {
    await fleetSettings(
      world,
      { '@web': { workers: 8 }, '@eu': { workers: 6 }, '@all': { site_name: 'example.org' } },
      { web: ['web1', 'web2'], eu: ['web2', 'db1'] },
    );
    const refused = await world.berth('converge', 'db1', '--json');
    assert.equal(refused.code, 1);
    const answer = JSON.parse(refused.stdout);
    assert.equal(answer.code, 'invalid_config');
    assert.match(
      answer.refused,
      /values: web2 is in @eu and @web, which give workers different values \(6 and 8\); give it under values\.web2\.workers, or make them agree$/,
    );
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1);
    assert.match(validate.stdout, /berth\.json: values: web2 is in @eu and @web/);
    // The node's own value decides for it: no hidden order does.
    await fleetSettings(
      world,
      {
        '@web': { workers: 8 },
        '@eu': { workers: 6 },
        '@all': { site_name: 'example.org' },
        web2: { workers: 7 },
      },
      { web: ['web1', 'web2'], eu: ['web2', 'db1'] },
    );
    const nodes = await world.berth('nodes', 'web2');
    assert.equal(nodes.code, 0, nodes.stderr);
    assert.match(nodes.stdout, /\n {2}workers = 7 \(berth\.json values\.web2\)\n/);
  });

  it('refuses values for a node or group berth.json does not have, and a value of no type berth knows', async () => {
    for (const [values, words] of [
      [{ '@wbe': { workers: 1 } }, 'values.@wbe: berth.json has no group wbe; did you mean @web?'],
      [{ web9: { workers: 1 } }, 'values.web9: berth does not know node web9; did you mean web1?'],
      [
        { '@all': { workers: 1.5 } },
        'values.@all.workers: a value is a string, a whole number, true or false',
      ],
      [
        { '@all': { Workers: 1 } },
        'values.@all.Workers: a value name is a-z, 0-9 and _, starting with a letter',
      ],
    ] as const) {
      await fleetSettings(world, values);
      const refused = await world.berth('converge', 'web1');
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr.trim(),
        `${join(world.state, 'berth.json')} is not valid: ${words}`,
      );
    }
  });
});

describe('what stands in the way of a module reading its values', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ site: SITE });
  });
  afterEach(() => world.cleanup());

  it('validate: a value a template reads undeclared, one required that no node gives, one of the wrong type, one no module declares, each with did you mean', async () => {
    await world.writeModule('site', {
      ...SITE,
      files: { '/etc/site.conf': { content: 'workers {{value wrokers}};\n' } },
    });
    await world.writeModule('cache', {
      description: 'a cache',
      values: { maxmemory: { type: 'string' }, port: { type: 'integer', default: 6379 } },
      files: {
        '/etc/cache.conf': { content: 'maxmemory {{value maxmemory}}\nport {{value port}}\n' },
      },
    });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { '@all': { port: '6379', maxmemroy: '1gb' } },
    });
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1);
    const catalog = join(world.state, 'modules');
    const settings = join(world.state, 'berth.json');
    assert.deepEqual(validate.stdout.trim().split('\n'), [
      `${catalog}/site.json: /etc/site.conf reads a value, {{value wrokers}}, that the module does not declare under values; did you mean workers?`,
      // site's definition is not valid, so no value is said to be declared by none.
      `${settings}: values.@all.port: "6379" is a string, but cache reads port as an integer`,
      `${catalog}/cache.json: values.maxmemory is required (it has no default), and berth.json gives it to no node`,
    ]);
    await world.writeModule('site', SITE);
    const again = await world.berth('validate', '--json');
    assert.equal(again.code, 1);
    assert.deepEqual(JSON.parse(again.stdout).problems, [
      {
        file: settings,
        problem: 'values.@all.port: "6379" is a string, but cache reads port as an integer',
      },
      {
        file: settings,
        problem:
          'values.@all.maxmemroy: no module of the catalog declares maxmemroy; did you mean maxmemory?',
      },
      {
        file: `${catalog}/cache.json`,
        problem:
          'values.maxmemory is required (it has no default), and berth.json gives it to no node',
      },
      {
        file: `${catalog}/site.json`,
        problem:
          'values.site_name is required (it has no default), and berth.json gives it to no node',
      },
    ]);
  });

  it('validate: a required value berth.json does not give a node its run declares the module on', async () => {
    await world.writeSettings({
      nodes: { box: { root: world.root }, other: { root: join(world.dir, 'other') } },
      values: { box: { site_name: 'box.example.org' } },
      run: { '@all': ['site'] },
    });
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1);
    assert.equal(
      validate.stdout.trim(),
      `${join(world.state, 'modules')}/site.json: values.site_name is required (it has no default), and berth.json does not give it to other, which run.@all runs site on`,
    );
  });

  it('validate: a default of another type, a fact berth does not know', async () => {
    await world.writeModule('site', {
      ...SITE,
      values: { ...SITE.values, workers: { type: 'integer', default: 'two' } },
    });
    await world.writeModule('host', {
      files: { '/etc/host': { content: '{{fact hostnmae}}\n' } },
    });
    const validate = await world.berth('validate');
    assert.equal(validate.code, 1);
    const catalog = join(world.state, 'modules');
    assert.deepEqual(validate.stdout.trim().split('\n'), [
      `${catalog}/host.json: /etc/host reads a fact, {{fact hostnmae}}, that berth does not know; did you mean hostname?; the facts are node, host, hostname, fqdn, address, codename, arch`,
      `${catalog}/site.json: values.workers: the default "two" is not an integer`,
    ]);
  });

  it('a converge blocks the node in words, each with its code, and refuses the act', async () => {
    await world.writeModule('site', {
      ...SITE,
      files: {
        '/etc/site.conf': {
          content: 'server_name {{value site_name}};\nworkers {{value workers}};\n',
        },
        '/etc/release': { content: '{{fact codename}}\n' },
      },
    });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { workers: 'eight', wrkers: 8 } },
    });
    assert.equal((await world.berth('assign', 'box', 'site')).code, 0);
    const preview = await world.berth('converge', 'box', '--json');
    assert.equal(preview.code, 0, preview.stderr);
    const blockers = JSON.parse(preview.stdout).nodes.box.blockers;
    assert.deepEqual(
      blockers.map((blocker: { code: string; words: string }) => [blocker.code, blocker.words]),
      [
        [
          'value_missing',
          'site needs the value site_name, which berth.json does not give box and the module has no default for: give it under values in berth.json (values.box, a group of it, or @all)',
        ],
        [
          'value_wrong_type',
          'site reads workers as an integer, but berth.json gives box "eight" (values.box.workers), a string',
        ],
        [
          'fact_unknown',
          '/etc/release of site reads {{fact codename}}, which box did not tell: its /etc/os-release says no VERSION_CODENAME',
        ],
        [
          'value_undeclared',
          'berth.json gives box the value wrkers (values.box.wrkers), which no module of the catalog declares; did you mean workers?',
        ],
      ],
    );
    const act = await world.actOn(
      await world.berth('converge', 'box'),
      'converge',
      'box',
      '--json',
    );
    assert.equal(act.code, 1);
    assert.equal(JSON.parse(act.stdout).code, 'blocked');
    assert.equal(existsSync(join(world.root, 'etc/site.conf')), false, 'nothing written');
  });
});

describe('a value is never read as shell', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld();
  });
  afterEach(() => world.cleanup());

  it('a value holding $(touch MARK) lands as text in the file and in the hook, and never runs', async () => {
    const mark = join(world.dir, 'MARK');
    const hostile = `$(touch ${mark})\`touch ${mark}\`'; touch ${mark}; '"; touch ${mark}; "`;
    await world.writeModule('site', {
      values: { site_name: { type: 'string' } },
      files: { '/etc/site.conf': { content: 'server_name {{value site_name}};\n' } },
      // The hook's text is the definition's own: a placeholder in it is text too.
      start:
        'printf "%s\\n" "$BERTH_VALUE_SITE_NAME" > "$BERTH_ROOT/seen"; echo "{{value site_name}}" > "$BERTH_ROOT/literal"',
      check: 'test "$BERTH_VALUE_SITE_NAME" = "$(cat "$BERTH_ROOT/seen")"',
    });
    await world.writeSettings({
      nodes: { box: { root: world.root } },
      values: { box: { site_name: hostile } },
    });
    assert.equal((await world.berth('assign', 'box', 'site')).code, 0);
    const { preview } = await converge(world, 'box');
    assert.equal(
      await readFile(join(world.root, 'etc/site.conf'), 'utf8'),
      `server_name ${hostile};\n`,
    );
    assert.equal(await readFile(join(world.root, 'seen'), 'utf8'), `${hostile}\n`);
    assert.equal(await readFile(join(world.root, 'literal'), 'utf8'), '{{value site_name}}\n');
    // The check sees it too (a converge preview runs it), and the status's check.
    const again = await world.berth('converge', 'box');
    assert.match(again.stdout, /nothing to do/, again.stdout);
    const status = await world.berth('status', 'box', '--check');
    assert.equal(status.code, 0, status.stdout);
    assert.equal(existsSync(mark), false, `${preview.stdout}: the value ran as shell`);
  });
});

describe('the digest covers the values a plan read', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld({ site: SITE });
    for (const node of ['web1', 'web2', 'db1'])
      await mkdir(world.rootOf(node), { recursive: true });
    await fleetSettings(world, VALUES);
    await converge(world, 'web1');
  });
  afterEach(() => world.cleanup());

  it('refuses an act whose value changed since its preview, naming the value', async () => {
    const preview = await world.berth('converge', 'web1');
    assert.match(preview.stdout, /nothing to do/);
    await fleetSettings(world, { ...VALUES, '@web': { workers: 16 } });
    const act = await world.actOn(preview, 'converge', 'web1');
    assert.equal(act.code, 1);
    assert.match(
      act.stderr,
      /the preview changed since digest [0-9a-f]{12}…: .*value workers of site is now 16, was 8; preview again/,
    );
    assert.equal(
      await readFile(join(world.rootOf('web1'), 'etc/site.conf'), 'utf8'),
      'server_name www.example.org;\nworkers 8;\ntls false;\n',
      'nothing written',
    );
  });

  it('says which value a file changes for, and writes it on the new digest', async () => {
    await fleetSettings(world, { ...VALUES, web1: { site_name: 'web1.example.org' } });
    const preview = await world.berth('converge', 'web1');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /write \/etc\/site\.conf \(mode 0644\): it differs from what berth writes, in lines that read value site_name\n/,
    );
    assert.match(
      preview.stdout,
      /\n {4}-server_name www\.example\.org;\n {4}\+server_name web1\.example\.org;\n/,
    );
    const act = await world.actOn(preview, 'converge', 'web1');
    assert.equal(act.code, 0, act.stderr);
    assert.match(
      await readFile(join(world.rootOf('web1'), 'etc/site.conf'), 'utf8'),
      /^server_name web1\.example\.org;/,
    );
  });
});

describe('facts of a rooted node', () => {
  let world: World;
  /** A module that reads every fact, in its file and its start. */
  const FACTS = {
    files: {
      '/etc/facts': {
        content:
          'node={{fact node}}\nhost={{fact host}}\nhostname={{fact hostname}}\nfqdn={{fact fqdn}}\ncodename={{fact codename}}\narch={{fact arch}}\n',
      },
    },
    start: 'env | grep "^BERTH_FACT_" | sort > "$BERTH_ROOT/env"',
  };
  beforeEach(async () => {
    world = await makeWorld({ facts: FACTS });
  });
  afterEach(() => world.cleanup());

  it("a directory tree tells its own hostname, fqdn and codename, and this machine's arch and address", async () => {
    await world.onBox('/etc/hostname', 'boxhost\n');
    await world.onBox(
      '/etc/hosts',
      '127.0.0.1 localhost\n127.0.1.1 boxhost.example.test boxhost\n',
    );
    await world.onBox('/etc/os-release', 'NAME="Debian GNU/Linux"\nVERSION_CODENAME=trixie\n');
    assert.equal((await world.berth('assign', 'box', 'facts')).code, 0);
    await converge(world, 'box');
    assert.equal(
      await readFile(join(world.root, 'etc/facts'), 'utf8'),
      `node=box\nhost=localhost\nhostname=boxhost\nfqdn=boxhost.example.test\ncodename=trixie\narch=${machine()}\n`,
    );
    const env = (await readFile(join(world.root, 'env'), 'utf8')).trim().split('\n');
    const [addressLine, ...others] = env[0]?.startsWith('BERTH_FACT_ADDRESS=') ? env : ['', ...env];
    assert.deepEqual(others, [
      `BERTH_FACT_ARCH=${machine()}`,
      'BERTH_FACT_CODENAME=trixie',
      'BERTH_FACT_FQDN=boxhost.example.test',
      'BERTH_FACT_HOST=localhost',
      'BERTH_FACT_HOSTNAME=boxhost',
      'BERTH_FACT_NODE=box',
    ]);
    // The address as `ip` tells it where iproute2 is; without it, one of this machine's own.
    const route = spawnSync('ip', ['-o', 'route', 'get', '1.0.0.0'], { encoding: 'utf8' });
    const told = addressLine?.slice('BERTH_FACT_ADDRESS='.length);
    if (!route.error) assert.equal(told || undefined, / src (\S+)/.exec(route.stdout)?.[1]);
    else if (told)
      assert.ok(
        Object.values(networkInterfaces())
          .flat()
          .some((item) => item?.address === told),
        told,
      );
  });

  it('never reads a fact through a link another user placed: the fact is not told, and the module is blocked', async () => {
    const secret = join(world.dir, 'not-for-templates');
    await writeFile(secret, 'private line\n');
    await mkdir(join(world.root, 'etc'), { recursive: true });
    execFileSync('ln', ['-s', secret, join(world.root, 'etc/hostname')]);
    execFileSync('chown', ['-h', '65534:65534', join(world.root, 'etc/hostname')]);
    assert.equal((await world.berth('assign', 'box', 'facts')).code, 0);
    const preview = await world.berth('converge', 'box');
    assert.equal(preview.code, 0, preview.stderr);
    assert.doesNotMatch(preview.stdout, /private line/);
    assert.match(
      preview.stdout,
      /blocked: \/etc\/facts of facts reads \{\{fact hostname\}\}, which box did not tell/,
    );
  });
});
