/**
 * One envelope for every command's `--json`, through the real binary: one JSON object on
 * one line with `format_version` (`log` one such object a line), a refusal with `refused`
 * and its `code` beside it; so a script reads every command the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as v from 'valibot';
import { ValidateAnswerSchema } from '../src/cli/validate.ts';
import { CaAnswerSchema } from '../src/commands/ca.ts';
import { ModulesAnswerSchema } from '../src/commands/modules.ts';
import { NodesAnswerSchema } from '../src/commands/nodes.ts';
import { RekeyAnswerSchema } from '../src/commands/rekey-state.ts';
import { SecretAnswerSchema } from '../src/commands/secret-value.ts';
import { StatusAnswerSchema } from '../src/commands/status.ts';
import { makeWorld, POSTGRES, type World } from './helpers/world.ts';

/** The one object a command printed, checked to be in the envelope. */
function oneObject(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one line: ${stdout}`);
  const json = JSON.parse(lines[0] as string);
  assert.equal(json.format_version, 1, stdout);
  return json;
}

describe('--json: one envelope for every command', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    await world.berth('assign', 'box', 'postgres');
    const preview = JSON.parse((await world.berth('converge', 'box', '--json')).stdout);
    const act = await world.berth('converge', 'box', '--yes', '--digest', preview.digest);
    assert.equal(act.code, 0, act.stderr);
  });
  after(() => world.cleanup());

  test('status, nodes, modules and validate', async () => {
    const status = oneObject((await world.berth('status', 'box', '--json')).stdout);
    assert.ok(status.nodes);
    const nodes = oneObject((await world.berth('nodes', '--json')).stdout);
    assert.ok(Array.isArray(nodes.nodes) || typeof nodes.nodes === 'object');
    const modules = oneObject((await world.berth('modules', '--json')).stdout);
    assert.ok(modules.modules);
    const validate = oneObject((await world.berth('validate', '--json')).stdout);
    assert.equal(validate.valid, true);
  });

  test('rekey: each node by name, in the envelope every command answers', async () => {
    const run = await world.berth('rekey', '--json');
    assert.equal(run.code, 0, run.stderr);
    const rekey = oneObject(run.stdout);
    const box = (rekey.nodes as Record<string, { outcome: string }>).box;
    assert.equal(box?.outcome, 'done');
    assert.match(String(rekey.said), /^sealed \d+ values? of box again/);
    assert.equal(rekey.refused, undefined);
  });

  test('secret: its value, or its refusal with a code', async () => {
    const read = await world.berth('secret', 'box', 'postgres', 'password', '--json');
    assert.equal(read.code, 0, read.stderr);
    assert.equal(typeof oneObject(read.stdout).value, 'string');
    const none = await world.berth('secret', 'box', 'postgres', 'nosuch', '--json');
    assert.equal(none.code, 1);
    const refused = oneObject(none.stdout);
    assert.equal(refused.code, 'secret_not_kept');
    assert.match(String(refused.refused), /keeps no secret nosuch/);
  });

  test('log: one enveloped object a line', async () => {
    const run = await world.berth('log', '--json');
    const lines = run.stdout.trim().split('\n');
    assert.ok(lines.length >= 2, run.stdout);
    for (const line of lines) {
      const entry = JSON.parse(line);
      assert.equal(entry.format_version, 1, line);
      assert.equal(typeof entry.act, 'string');
    }
  });

  test('refusals of the reading commands carry a code', async () => {
    const nodes = oneObject((await world.berth('nodes', '@nope', '--json')).stdout);
    assert.equal(nodes.code, 'unknown_group');
    const modules = oneObject((await world.berth('modules', 'nosuch', '--json')).stdout);
    assert.equal(modules.code, 'unknown_module');
  });

  test("each reading's --json is a value of its answer's schema, nothing beside it", async () => {
    const answers: [string[], v.GenericSchema][] = [
      [['status', 'box'], StatusAnswerSchema],
      [['status', 'nosuch'], StatusAnswerSchema],
      [['nodes'], NodesAnswerSchema],
      [['nodes', '@nope'], NodesAnswerSchema],
      [['modules'], ModulesAnswerSchema],
      [['modules', 'postgres'], ModulesAnswerSchema],
      [['validate'], ValidateAnswerSchema],
      [['ca'], CaAnswerSchema],
      [['rekey'], RekeyAnswerSchema],
      [['secret', 'box', 'postgres', 'password'], SecretAnswerSchema],
    ];
    for (const [words, schema] of answers) {
      const printed = oneObject((await world.berth(...words, '--json')).stdout);
      // valibot's objects drop what they do not name: equal only if nothing was beside it.
      assert.deepEqual(v.parse(schema, printed), printed, words.join(' '));
    }
  });

  test('copy-state to a store that cannot be reached: refused in the envelope, exit 3', async () => {
    const run = await world.berth(
      'copy-state',
      '--to',
      'postgresql://berth@127.0.0.1:1/berth',
      '--json',
    );
    assert.equal(run.code, 3, run.stderr);
    const refused = oneObject(run.stdout);
    assert.equal(refused.code, 'stores_unavailable');
    assert.match(String(refused.refused), /^the stores cannot be opened: /);
  });
});
