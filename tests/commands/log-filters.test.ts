/**
 * `berth log [target] [--since D] [--tail N]`: the journal of a node or a group alone, of
 * the last while, its last acts; each act with its target, its digest and its typed
 * outcome, in words and in `--json`; an earlier berth's entries read as they were written;
 * bad input refused in the user's words.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf, makeWorld, POSTGRES, type World } from '../helpers/world.ts';

const AT = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';

describe('berth log of a target, since a while, its last acts', () => {
  let world: World;
  /** The lines `berth log ...args` prints, each without its time and actor. */
  const logged = async (...args: string[]) => {
    const run = await world.berth('log', ...args);
    assert.equal(run.code, 0, run.stderr);
    return run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(new RegExp(`^${AT} \\S+ \\(cli\\) `), ''));
  };

  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.rootedNodes(['db1', 'db2', 'web1', 'idle1'], { db: ['db1', 'db2'] });
    // An earlier berth's entry on db2, a day old: no target, digest or typed outcome.
    await mkdir(join(world.state, 'nodes', 'db2'), { recursive: true });
    const earlier = {
      at: new Date(Date.now() - 86_400_000).toISOString(),
      actor: 'alice',
      via: 'cli',
      act: 'assign',
      node: 'db2',
      module: 'redis',
      outcome: 'done',
      said: 'db2 is to run redis',
    };
    await appendFile(
      join(world.state, 'nodes', 'db2', 'journal.jsonl'),
      `${JSON.stringify(earlier)}\n`,
    );
    // idle1's one act is three days old: nothing of it is in the last day.
    await mkdir(join(world.state, 'nodes', 'idle1'), { recursive: true });
    await appendFile(
      join(world.state, 'nodes', 'idle1', 'journal.jsonl'),
      `${JSON.stringify({ ...earlier, at: new Date(Date.now() - 3 * 86_400_000).toISOString(), node: 'idle1' })}\n`,
    );
    for (const args of [
      ['assign', '@db', 'postgres'],
      ['assign', 'web1', 'postgres'],
      ['converge', 'nosuch', '--yes'],
    ])
      await world.berth(...args);
    const preview = await world.berth('converge', '@db');
    assert.equal((await world.actOn(preview, 'converge', '@db')).code, 0);
  });
  after(() => world.cleanup());

  it('a node alone: its acts, each of a target named with it, and the digest acted on', async () => {
    const lines = await logged('db1');
    assert.deepEqual(lines.slice(0, 1), ['assign db1 of @db postgres: done']);
    assert.match(lines[1] ?? '', /^converge db1 of @db: done \(digest [0-9a-f]{12}\)$/);
    assert.equal(lines.length, 2);
  });

  it('a group: its nodes, the earlier entry among them, as they were written', async () => {
    const lines = await logged('@db');
    assert.equal(lines[0], 'assign db2 redis: done');
    // One target's nodes act side by side: either may end first.
    assert.deepEqual(lines.slice(1, 3).sort(), [
      'assign db1 of @db postgres: done',
      'assign db2 of @db postgres: done',
    ]);
    assert.equal(lines.length, 5);
    assert.deepEqual(await logged('web1'), ['assign web1 postgres: done']);
  });

  it('a node berth does not know is refused; the act refused for it is in the whole journal', async () => {
    const run = await world.berth('log', 'nosuch');
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'berth does not know node nosuch; add it under nodes in berth.json\n');
    const all = await logged();
    assert.ok(all.some((line) => line.startsWith('converge nosuch: refused: berth does not know')));
  });

  it('--since: the acts of the last while; --tail: the last acts', async () => {
    const hour = await logged('--since', '1h');
    assert.ok(!hour.some((line) => line.includes('redis')), hour.join('\n'));
    assert.equal(
      (await logged('--since', '2d')).filter((line) => line.includes('redis')).length,
      1,
    );
    // The two nodes' acts, in the order they ended.
    const last = (await logged('@db', '--tail', '2')).map((line) => line.split(':')[0]).sort();
    assert.deepEqual(last, ['converge db1 of @db', 'converge db2 of @db']);
    assert.deepEqual(await logged('web1', '--since', '1m', '--tail', '5'), [
      'assign web1 postgres: done',
    ]);
  });

  it('says when none of the acts is asked for', async () => {
    const none = await world.berth('log', 'idle1', '--since', '1d');
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'the journal has no act on idle1 in the last 1d\n');
    assert.equal((await logged('idle1', '--since', '4d')).length, 1);
  });

  it('--json: each act typed, with its target, digest, code, steps and blockers', async () => {
    const run = await world.berth('log', '@db', '--json');
    assert.equal(run.code, 0, run.stderr);
    const entries = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const [earlier] = entries;
    assert.deepEqual(Object.keys(earlier).sort(), [
      'act',
      'actor',
      'at',
      'format_version',
      'module',
      'node',
      'outcome',
      'said',
      'via',
    ]);
    const converged = entries.find((entry) => entry.act === 'converge' && entry.node === 'db1');
    assert.equal(converged.entry_version, 3);
    assert.equal(converged.target, '@db');
    assert.match(converged.digest, /^[0-9a-f]{64}$/);
    assert.ok(converged.steps.length > 0);
    for (const step of converged.steps) assert.equal(step.module, 'postgres', step.kind);
    assert.deepEqual(converged.blockers, []);
    assert.equal(converged.code, undefined);
    const refused = JSON.parse(
      (await world.berth('log', '--json')).stdout
        .trimEnd()
        .split('\n')
        .find((line) => line.includes('"nosuch"')) ?? '{}',
    );
    assert.equal(refused.code, 'unknown_node');
    assert.equal(refused.target, 'nosuch');
  });

  it("a blocked act's blockers are journaled with their codes", async () => {
    await world.onBox('/etc/postgres/pg.conf', 'by hand\n');
    await world.writeSettings({
      nodes: { box: { root: world.root }, db1: { root: world.rootOf('db1') } },
      groups: { db: ['db1'] },
    });
    await world.berth('assign', 'box', 'postgres');
    const preview = await world.berth('converge', 'box');
    const act = await world.berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
    assert.equal(act.code, 1);
    const json = (await world.berth('log', 'box', '--json')).stdout.trimEnd().split('\n');
    const blocked = JSON.parse(json.at(-1) ?? '{}');
    assert.equal(blocked.outcome, 'refused');
    assert.equal(blocked.code, 'blocked');
    assert.equal(blocked.blockers[0].code, 'held_not_managed');
    assert.equal(blocked.digest, digestOf(preview.stdout));
  });

  it('bad input is refused in the words of the option, exit 2; a target unknown, exit 1', async () => {
    for (const [args, words] of [
      [
        ['--since', 'yesterday'],
        '--since takes a duration, like 90s, 15m, 2h or 7d, not "yesterday"',
      ],
      [['--tail', '0'], '--tail takes a whole number of acts from 1, not "0"'],
      [['--tail', 'ten'], '--tail takes a whole number of acts from 1, not "ten"'],
    ] as const) {
      const run = await world.berth('log', ...args);
      assert.deepEqual([run.code, run.stderr, run.stdout], [2, `${words}\n`, ''], args.join(' '));
      const json = await world.berth('log', ...args, '--json');
      assert.deepEqual(JSON.parse(json.stdout), {
        format_version: 1,
        refused: words,
        code: 'usage',
      });
    }
    const group = await world.berth('log', '@dbs', '--json');
    assert.equal(group.code, 1);
    assert.deepEqual(JSON.parse(group.stdout), {
      format_version: 1,
      refused: 'berth.json has no group dbs; did you mean @db?',
      code: 'unknown_group',
    });
  });

  it("other tools' ways to ask for the last acts point to --tail", async () => {
    const limit = await world.berth('log', '--limit', '3');
    assert.equal(
      limit.stderr,
      'berth log has no option --limit: name the nodes in the target instead (berth log @web,!web3), or the last N acts with --tail N\n',
    );
    const n = await world.berth('log', '-n', '3');
    assert.equal(n.stderr, 'berth log has no option -n: --tail N shows the last N acts\n');
  });
});
