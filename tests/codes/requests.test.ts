/**
 * The codes of a request refused before any node is acted on — its words, its fields,
 * berth.json, a name, a target, a grant — through the real binary with `--json` and a
 * real `berth api` over a socket, for one node and for a group.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('requests');

describe('refused before any node', () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      modules: { app: { description: 'an app' } },
      nodes: ['web1', 'web2', 'web3'],
      settings: {
        groups: { web: ['web1', 'web2', 'web3'] },
        grants: [
          { sub: 'ops', may: ['*'], on: '@all' },
          { sub: 'bob', may: ['converge'], on: 'web1' },
        ],
      },
    });
  });
  after(() => faces?.close());

  it('usage: a command line berth does not take, in the one envelope under --json, exit 2', async () => {
    for (const [cell, words] of [
      ['cli node', ['converge', 'web1', '--bogus']],
      ['cli group', ['converge', '@web', '--bogus']],
      ['cli node', ['convrge', 'web1']],
      ['cli node', ['converge', 'web1', '--digest']],
      ['cli group', ['assign', '@web', 'app', 'extra']],
    ] as const) {
      const answer = await faces.cli(...words);
      assert.equal(answer.status, 2, words.join(' '));
      assert.equal(answer.body.format_version, 1, words.join(' '));
      codes.refused(cell, answer, 'usage');
    }
    // The words stay for people: on standard error without --json.
    const said = await faces.world.berth('convrge', 'web1');
    assert.equal(said.code, 2);
    assert.match(said.stderr, /^berth has no command "convrge"; did you mean converge\?/);
  });

  it('fields_missing: exit 2 on the command line, 400 over the API', async () => {
    const line = await faces.cli('adopt');
    assert.equal(line.status, 2);
    assert.equal(line.body.format_version, 1);
    codes.refused('cli node', line, 'fields_missing');
    const group = await faces.cli('take', '@web');
    assert.equal(group.status, 2);
    codes.refused('cli group', group, 'fields_missing');

    const served = await faces.served('adopt', { node: '' });
    assert.equal(served.status, 400);
    codes.refused('api node', served, 'fields_missing');
    const take = await faces.served('take', { node: '@web' });
    assert.equal(take.status, 400);
    codes.refused('api group', take, 'fields_missing');
  });

  it('invalid_name, invalid_target, unknown_node, unknown_group: 409 and exit 1', async () => {
    const refusals = [
      ['node', 'assign', { node: 'web1', module: 'Bad_Name' }, 'invalid_name'],
      ['group', 'assign', { node: '@web', module: 'Bad_Name' }, 'invalid_name'],
      ['node', 'converge', { node: 'Web_1' }, 'invalid_name'],
      ['group', 'converge', { node: 'web1,,web2' }, 'invalid_target'],
      ['node', 'converge', { node: 'web9' }, 'unknown_node'],
      ['group', 'converge', { node: 'web1,web9' }, 'unknown_node'],
      ['group', 'converge', { node: '@nope' }, 'unknown_group'],
    ] as const;
    for (const [scope, command, asked, code] of refusals)
      await codes.refusedOnBoth(faces, scope, command, asked, { exit: 1, status: 409, code });
  });

  it('not_granted: a subject no grant covers, for a node and for a group', async () => {
    for (const [scope, node] of [
      ['node', 'web2'],
      ['group', '@web'],
    ] as const) {
      const served = await faces.served('converge', { node }, 'bob');
      assert.equal(served.status, 409);
      codes.refused(`api ${scope}`, served, 'not_granted');
    }
    // The same subject on what it is granted is not refused.
    const granted = await faces.served('converge', { node: 'web1' }, 'bob');
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
  });

  it('invalid_config: berth.json not valid, on both faces', async () => {
    const settings = join(faces.world.state, 'berth.json');
    const good = await readFile(settings, 'utf8');
    await writeFile(settings, JSON.stringify({ ...JSON.parse(good), groups: { web: 7 } }));
    try {
      await codes.convergeRefusedOnBoth(faces, 'web1', {
        exit: 1,
        status: 409,
        code: 'invalid_config',
      });
    } finally {
      await writeFile(settings, good);
    }
  });

  it('invalid_plan: berth act of a file that is no plan, exit 2', async () => {
    const file = join(faces.world.dir, 'not-a-plan.json');
    await writeFile(file, '{"command": "converge"}');
    const answer = await faces.cli('act', file);
    assert.equal(answer.status, 2);
    assert.equal(answer.body.format_version, 1);
    codes.refused('cli node', answer, 'invalid_plan');
  });
});

codes.finally();
