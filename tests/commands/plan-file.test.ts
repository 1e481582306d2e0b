/**
 * Plan files: a preview written with `--out FILE` for review, and `berth act FILE`, which
 * acts on exactly it, or is refused naming each node and what changed since. A plan file
 * holds no secret value; a file that is not a plan is refused in words.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, GITEA, makeWorld, POSTGRES, runBerth, type World } from '../helpers/world.ts';

/** What a test edits of a plan file. */
interface Plan {
  digest: string;
  preview: { said: string; nodes: Record<string, { steps: unknown[] }> };
}

describe('plan files', () => {
  let world: World;
  const rootOf = (node: string) => world.rootOf(node);
  const conf = (node: string) => join(rootOf(node), 'etc/postgres/pg.conf');
  const planPath = (name: string) => join(world.dir, name);

  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.rootedNodes(['db1', 'db2'], { db: ['db1', 'db2'] });
    await world.berth('assign', '@db', 'postgres');
  });
  after(() => world.cleanup());

  it('a preview with --out writes its plan; berth act FILE acts on exactly it', async () => {
    const file = planPath('install.plan');
    const preview = await world.berth('converge', 'db1', '--out', file);
    assert.equal(preview.code, 0, preview.stderr);
    assert.equal(preview.stderr, `the plan is in ${file}; berth act ${file} acts on it\n`);
    const digest = digestOf(preview.stdout);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const plan = JSON.parse(await readFile(file, 'utf8'));
    assert.equal(plan.format_version, 2);
    assert.equal(plan.kind, 'berth plan');
    assert.equal(plan.state, world.state);
    assert.equal(plan.command, 'converge');
    assert.equal(plan.target, 'db1');
    assert.equal(plan.digest, digest);
    assert.equal(plan.preview.said, preview.stdout.trimEnd());
    assert.deepEqual(
      plan.preview.nodes.db1.steps.map((step: { kind: string }) => step.kind),
      ['manage', 'mkdir', 'mint', 'write', 'start'],
    );
    assert.equal(existsSync(conf('db1')), false, 'a preview with --out does nothing');

    const act = await world.berth('act', file);
    assert.equal(act.code, 0, act.stderr);
    // What it will do, from the file, before it acts.
    const shown = `acting on ${file}: converge db1, as previewed at ${plan.previewed_at}:\n${plan.preview.said}\n`;
    assert.ok(act.stdout.startsWith(shown), act.stdout);
    assert.match(act.stdout.slice(shown.length), /^wrote \/etc\/postgres\/pg.conf\n/m);
    assert.match(act.stdout, /\ndb1 is as assigned\n$/);
    assert.equal(existsSync(join(rootOf('db1'), 'started-postgres')), true);
    assert.equal(existsSync(join(rootOf('db2'), 'started-postgres')), false);
    const acts = (await world.journal()).filter((entry) => entry.act === 'converge');
    assert.deepEqual(
      acts.map((entry) => [entry.node, entry.outcome]),
      [['db1', 'done']],
    );
  });

  it('a node changed since the plan: refused, naming it and what changed; nothing done', async () => {
    const file = planPath('fleet.plan');
    const preview = await world.berth('converge', '@db', '--out', file);
    assert.equal(preview.code, 0, preview.stderr);
    // db1 is installed already: an update of a hand-edited file; db2 an install.
    await writeFile(conf('db1'), 'password=edited\n');
    const act = await world.berth('act', file);
    assert.equal(act.code, 1, act.stdout);
    assert.match(
      act.stderr,
      /^the preview changed since digest [0-9a-f]{12}…: db1: file \/etc\/postgres\/pg.conf changed on db1; nothing was done on any node; preview again\n$/,
    );
    assert.equal(await readFile(conf('db1'), 'utf8'), 'password=edited\n');
    assert.equal(existsSync(conf('db2')), false);

    // Previewed again, the new plan acts.
    const again = await world.berth('converge', '@db', '--out', file);
    assert.equal(again.code, 0, again.stderr);
    const acted = await world.berth('act', file, '--parallel', '1');
    assert.equal(acted.code, 0, acted.stderr);
    assert.match(acted.stdout, /2 of 2 nodes done\n$/);
    assert.equal(existsSync(join(rootOf('db2'), 'started-postgres')), true);
  });

  it('holds no secret value, though its diffs show where a secret stands', async () => {
    const secret = (await readFile(join(rootOf('db1'), 'etc/postgres/password'), 'utf8')).trim();
    assert.ok(secret.length >= 16, secret);
    // The file berth wrote, with a line added by hand: its diff has the secret's line around.
    const held = await readFile(conf('db1'), 'utf8');
    assert.ok(held.includes(secret));
    await writeFile(conf('db1'), `${held}max_connections = 50\n`);
    for (const target of ['db1', '@db']) {
      const file = planPath(`secret-${target}.plan`);
      const preview = await world.berth('converge', target, '--out', file);
      assert.equal(preview.code, 0, preview.stderr);
      const text = await readFile(file, 'utf8');
      assert.match(text, /password=\[secret password\]/, 'the diff is in the plan');
      assert.equal(text.includes(secret), false, `${target}: the secret is in the plan`);
    }
  });

  it('refuses, in words and with nothing done, a file that is not a plan', async () => {
    const journalBefore = (await world.journal()).length;
    const refused = async (name: string, content: string | undefined) => {
      const file = planPath(name);
      if (content !== undefined) await writeFile(file, content);
      const act = await world.berth('act', file);
      assert.equal(act.code, 2, act.stderr);
      assert.equal(act.stdout, '');
      return act.stderr.replace(`${file} `, 'FILE ').replace(`${file}:`, 'FILE:');
    };
    assert.equal(
      await refused('missing.plan', undefined),
      'berth cannot read the plan file FILE: no such file or directory\n',
    );
    assert.equal(
      await refused('text.plan', 'digest 0123\n'),
      'FILE is not a berth plan file (berth take or converge writes one with --out FILE): it is not JSON\n',
    );
    // A preview's --json answer is berth's, but not a plan.
    const answer = (await world.berth('converge', 'db1', '--json')).stdout;
    assert.equal(
      await refused('answer.json', answer),
      'FILE is not a berth plan file (berth take or converge writes one with --out FILE)\n',
    );
    const plan = JSON.parse(await readFile(planPath('install.plan'), 'utf8'));
    assert.equal(
      await refused('later.plan', JSON.stringify({ ...plan, format_version: 3 })),
      'FILE is a berth plan file of format 3; this berth reads format 2: preview again with --out\n',
    );
    // A plan of the berth before whole plans were covered.
    assert.equal(
      await refused('earlier.plan', JSON.stringify({ ...plan, format_version: 1 })),
      'FILE is a berth plan file of format 1; this berth reads format 2: preview again with --out\n',
    );
    assert.equal(
      await refused('edited.plan', JSON.stringify({ ...plan, digest: 'abc' })),
      'FILE is not a valid berth plan file: digest: a digest is 64 lower-case hex characters\n',
    );
    assert.equal(
      await refused('other.plan', JSON.stringify({ ...plan, digest: 'a'.repeat(64) })),
      'FILE is not a valid berth plan file: its digest is not the digest of the preview it holds\n',
    );
    assert.equal(
      await refused('renamed.plan', JSON.stringify({ ...plan, command: 'take' })),
      'FILE is not a valid berth plan file: missing field module\n',
    );
    assert.equal(
      await refused('extra.plan', JSON.stringify({ ...plan, yes: true })),
      'FILE is not a valid berth plan file: unknown field yes\n',
    );
    // With --json, the refusal is the API's shape.
    const json = await world.berth('act', planPath('text.plan'), '--json');
    assert.equal(json.code, 2);
    const enveloped = JSON.parse(json.stdout);
    assert.equal(enveloped.code, 'invalid_plan');
    assert.equal(enveloped.format_version, 1);
    assert.equal((await world.journal()).length, journalBefore);
  });

  it('a plan edited by hand is refused saying so, nothing done: a node removed, steps emptied, said rewritten', async () => {
    // db2's file edited by hand: the plan rewrites it.
    await writeFile(conf('db2'), 'password=edited\n');
    const file = planPath('edited-from.plan');
    assert.equal((await world.berth('converge', '@db', '--out', file)).code, 0);
    const plan = JSON.parse(await readFile(file, 'utf8'));
    assert.ok(plan.preview.nodes.db2.steps.length > 0, 'db2 has something to do');
    const edits: Record<string, (plan: Plan) => void> = {
      'a node removed': (edited) => {
        delete edited.preview.nodes.db2;
      },
      'steps emptied': (edited) => {
        for (const node of Object.values(edited.preview.nodes)) node.steps = [];
      },
      'said rewritten': (edited) => {
        edited.preview.said = `converge @db\nrecap of converge @db:\n  db1: nothing to do\n  db2: nothing to do\n\ndigest ${edited.digest}`;
      },
      'a field added': (edited) => {
        (edited.preview as Record<string, unknown>).reviewed = 'ok';
      },
    };
    const journalBefore = (await world.journal()).length;
    for (const [how, edit] of Object.entries(edits)) {
      const edited = structuredClone(plan);
      edit(edited);
      await writeFile(file, JSON.stringify(edited, null, 2));
      const act = await world.berth('act', file);
      assert.equal(act.code, 1, `${how}: ${act.stdout}`);
      assert.equal(
        act.stderr,
        `${file} was edited since berth wrote it: what it shows is not the preview its digest names; nothing was done: preview again with --out\n`,
        how,
      );
      assert.equal(act.stdout, '', `${how}: nothing of the plan is shown`);
      const json = await world.berth('act', file, '--json');
      assert.equal(JSON.parse(json.stdout).code, 'plan_edited', how);
    }
    assert.equal(await readFile(conf('db2'), 'utf8'), 'password=edited\n', 'nothing was done');
    assert.equal((await world.journal()).length, journalBefore, 'no act was journaled');

    // As berth wrote it, the same plan acts.
    await writeFile(file, JSON.stringify(plan, null, 2));
    const act = await world.berth('act', file);
    assert.equal(act.code, 0, act.stderr);
    assert.notEqual(await readFile(conf('db2'), 'utf8'), 'password=edited\n');
  });

  it('a plan already acted on is refused, saying when and by whom', async () => {
    await writeFile(conf('db1'), 'password=edited again\n');
    const file = planPath('once.plan');
    assert.equal((await world.berth('converge', 'db1', '--out', file)).code, 0);
    const first = await world.berth('act', file);
    assert.equal(first.code, 0, first.stderr);
    const acted = (await world.journal()).filter((entry) => entry.act === 'converge').at(-1);
    const again = await world.berth('act', file);
    assert.equal(again.code, 1, again.stdout);
    const at = /at (\S+) by (\S+);/.exec(again.stderr);
    assert.equal(
      again.stderr,
      `${file} was acted on already, at ${at?.[1]} by ${acted?.actor}; nothing was done: preview again for a new plan\n`,
    );
    const when = Date.parse(at?.[1] ?? '');
    assert.ok(Math.abs(when - Date.parse(acted?.at as string)) < 5_000, again.stderr);
    const json = await world.berth('act', file, '--json');
    assert.equal(JSON.parse(json.stdout).code, 'plan_acted_on');
    const converges = (await world.journal()).filter((entry) => entry.act === 'converge');
    assert.deepEqual(converges.at(-1), acted, 'the second act was not begun');
  });

  it('a plan made with another state is refused once, naming the state it was made with', async () => {
    // Another state directory over the same nodes and catalog, with none of its records.
    const other = join(world.dir, 'other-state');
    await mkdir(join(other, 'modules'), { recursive: true });
    await copyFile(join(world.state, 'berth.json'), join(other, 'berth.json'));
    await copyFile(
      join(world.state, 'modules', 'postgres.json'),
      join(other, 'modules', 'postgres.json'),
    );
    await writeFile(conf('db2'), 'password=by hand\n');
    const file = planPath('elsewhere.plan');
    assert.equal((await world.berth('converge', '@db', '--out', file)).code, 0);
    const act = await runBerth(['--state', other, 'act', file]);
    assert.equal(act.code, 1, act.stdout);
    assert.equal(
      act.stderr,
      `${file} was made with the state ${world.state}, and this berth uses ${other}, where no node of @db keeps its preview; nothing was done: act on it with --state ${world.state}, or preview again\n`,
    );
    const json = await runBerth(['--state', other, 'act', file, '--json']);
    const body = JSON.parse(json.stdout);
    assert.equal(body.code, 'plan_elsewhere');
    assert.deepEqual(
      Object.values(body.nodes).map((node) => (node as { code: string }).code),
      ['plan_elsewhere', 'plan_elsewhere'],
    );
    // Its digest alone, on the command line: said once too, not node by node.
    const { digest } = JSON.parse(await readFile(file, 'utf8'));
    const direct = await runBerth([
      '--state',
      other,
      'converge',
      '@db',
      '--yes',
      '--digest',
      digest,
    ]);
    assert.equal(direct.code, 1);
    assert.match(
      direct.stderr,
      /^the preview changed since digest [0-9a-f]{12}…: no node of @db keeps that preview: it was made with another state or store, or more than 64 previews ago; nothing was done on any node; preview again\n$/,
    );
    assert.equal(await readFile(conf('db2'), 'utf8'), 'password=by hand\n');
  });

  it('--out goes with a preview, not with --yes', async () => {
    const run = await world.berth('converge', 'db1', '--yes', '--out', planPath('x.plan'));
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--out writes a preview's plan file, and --yes acts/);
    assert.equal(existsSync(planPath('x.plan')), false);
  });
});

describe('a plan file of a take', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    // gitea installed by hand: its data, its database password, an app.ini that holds it.
    await world.onBox('/var/lib/gitea/repositories/a.git', 'objects');
    await world.onBox('/etc/gitea/db_password', 'hunter2-by-hand\n');
    await world.onBox('/etc/gitea/app.ini', '[database]\nPASSWD = hunter2-by-hand\nHOST = db\n');
    await world.berth('adopt', 'box');
  });
  after(() => world.cleanup());

  it('carries the module and --mint to the act, and is refused when a file changed', async () => {
    const file = join(world.dir, 'take.plan');
    const args = ['take', 'box', 'gitea', '--mint', 'admin_token', '--out', file];
    assert.equal((await world.berth(...args)).code, 0);
    const text = await readFile(file, 'utf8');
    const plan = JSON.parse(text);
    assert.equal(plan.command, 'take');
    assert.equal(plan.module, 'gitea');
    assert.deepEqual(plan.mint, ['admin_token']);
    assert.match(text, /PASSWD = \[secret db_password\]/);
    assert.equal(text.includes('hunter2'), false, 'the found secret is in the plan');

    await world.onBox('/etc/gitea/app.ini', '[database]\nPASSWD = hunter2-by-hand\nHOST = db2\n');
    const stale = await world.berth('act', file);
    assert.equal(stale.code, 1, stale.stdout);
    assert.match(
      stale.stderr,
      /^the preview changed since digest [0-9a-f]{12}…: file \/etc\/gitea\/app.ini changed on box; preview again\n$/,
    );
    assert.deepEqual((await world.readState()).managed, {});

    assert.equal((await world.berth(...args)).code, 0);
    const act = await world.berth('act', file);
    assert.equal(act.code, 0, act.stderr);
    assert.match(
      act.stdout,
      /secret admin_token: minted by berth and written to \/etc\/gitea\/admin_token/,
    );
    assert.deepEqual(Object.keys((await world.readState()).managed?.box ?? {}), ['gitea']);
  });
});
