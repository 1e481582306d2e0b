/**
 * A refusal is a value: made by the model and the commands with its facts, rendered in
 * words only at the edge. Read back from JSON (as a store keeps it), it is the same value
 * and says the same words; a value that is no refusal of berth's is not read as one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { grantedTarget } from '../../src/model/grants.ts';
import { type Refusal, RefusalSchema } from '../../src/model/refusal.ts';
import { readTarget, resolveTarget } from '../../src/model/targets.ts';
import { refusalWords } from '../../src/words/refusals.ts';

const inventory = { nodes: ['web1', 'web2'], groups: { web: ['web1', 'web2'] } };

function refusalOf(targeted: { ok: true } | { ok: false; refusal: Refusal }): Refusal {
  assert.equal(targeted.ok, false);
  return (targeted as { refusal: Refusal }).refusal;
}

describe('refusals as typed values', () => {
  it('carries the facts its words need, not the words', () => {
    const unknown = refusalOf(resolveTarget('wbe1', inventory));
    assert.deepEqual(unknown, {
      kind: 'unknown-node',
      code: 'unknown_node',
      node: 'wbe1',
      meant: 'web1',
    });
    assert.equal(
      refusalWords(unknown),
      'berth does not know node wbe1; did you mean web1? Else add it under nodes in berth.json',
    );
  });

  it('reads back from JSON as the same value, in the same words', () => {
    const settings = {
      nodes: { web1: { root: '/' }, web2: { root: '/' } },
      groups: inventory.groups,
      grants: [{ sub: 'dep', may: ['converge' as const], on: 'web1' }],
    };
    const made: Refusal[] = [
      refusalOf(resolveTarget('@db', inventory)),
      refusalOf(resolveTarget('@web,!@web', inventory)),
      refusalOf(resolveTarget('Web1', inventory)),
      refusalOf(grantedTarget(settings, 'dep', 'converge', readTarget('@web', inventory))),
      { kind: 'stores', code: 'lock_timeout', message: 'another berth holds the lock' },
      {
        kind: 'nodes',
        code: 'nodes_refused',
        nodes: [
          {
            node: 'web1',
            refusal: {
              kind: 'unreachable',
              code: 'unreachable',
              node: 'web1',
              message: 'ssh: connect to host web1 port 22: Connection refused',
            },
          },
          { node: 'web2' },
        ],
      },
    ];
    for (const refusal of made) {
      const read = v.parse(RefusalSchema, JSON.parse(JSON.stringify(refusal)));
      assert.deepEqual(read, refusal);
      assert.equal(refusalWords(read), refusalWords(refusal));
    }
    assert.equal(
      refusalWords(made[5] as Refusal),
      'web1: web1 cannot be reached: ssh: connect to host web1 port 22: Connection refused\nweb2: not begun, as a batch before it had a node fail',
    );
  });

  it('is not read from what is no refusal of berth', () => {
    for (const hostile of [
      { kind: 'failed', code: 'blocked', command: 'x', message: 'y' },
      { kind: 'said', code: 'failed', words: 'anything at all' },
      { kind: 'unknown-node', code: 'unknown_node' },
    ])
      assert.equal(v.safeParse(RefusalSchema, hostile).success, false);
  });
});
