/**
 * Commands moved to typed results return what they did as a value, in no words; the one
 * renderer says it, as both faces and the journal show it.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as v from 'valibot';
import { assign } from '../../src/commands/assign.ts';
import type { CommandContext } from '../../src/commands/context.ts';
import { forget } from '../../src/commands/forget.ts';
import type { Outcome } from '../../src/commands/outcome.ts';
import { unassign } from '../../src/commands/unassign.ts';
import { type CatalogEntry, parseDefinition } from '../../src/model/catalog.ts';
import { SettingsSchema } from '../../src/model/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import { saidOf, untoldOf } from '../../src/words/said.ts';
import { memoryMachine } from '../core/memory-machine.ts';

describe('typed results, said at the edge', () => {
  let context: CommandContext;
  beforeEach(async () => {
    context = {
      store: await memoryStores().openNode('box', 'assign'),
      settings: v.parse(SettingsSchema, { nodes: { box: { root: '/' } } }),
      catalog: {
        names: async () => ['redis'],
        entry: async (name): Promise<CatalogEntry> =>
          parseDefinition(name, `${name}.json`, JSON.stringify({ data: ['/var/lib/redis'] })),
      },
      machine: memoryMachine(),
      actor: 'tester',
      via: 'cli',
      now: () => new Date('2026-11-25T18:00:00.000Z'),
      line: {},
    };
  });
  const request = { node: 'box', module: 'redis', yes: false };

  it('assign returns what it did, and the renderer says it in words', async () => {
    const first = await assign(request, context);
    assert.deepEqual(first, {
      result: { command: 'assign', node: 'box', module: 'redis', already: false },
    });
    assert.equal(saidOf(first), 'box is to run redis');
    const again = await assign(request, context);
    assert.equal(saidOf(again), 'box is already to run redis; nothing changed');
  });

  it('unassign and forget say what they did from their values', async () => {
    await assign(request, context);
    const record = await context.store.record();
    await context.store.saveRecord({
      ...record,
      managed: { redis: { since: '2026-11-25T17:00:00.000Z', via: 'converge', started: true } },
    });
    const dropped = await unassign(request, context);
    assert.deepEqual(dropped.result, {
      command: 'unassign',
      node: 'box',
      module: 'redis',
      managed: true,
    });
    assert.equal(
      saidOf(dropped),
      'box is no longer to run redis; converge box to release it (its data stays)',
    );
    const forgotten = await forget(request, context);
    assert.equal('said' in forgotten, false, 'no words come from the command');
    assert.equal(
      saidOf(forgotten),
      'berth no longer manages redis on box; its stop was not run, and its data, files and secrets stay on box and in the vault',
    );
  });

  it('says a converge act from the steps it did, and leaves the command line its last line', () => {
    const told = [
      {
        step: {
          do: 'write',
          module: 'redis',
          path: '/etc/redis.conf',
          mode: '0644',
          why: { because: 'missing' },
        },
        voice: 'converge',
      },
      {
        step: { do: 'reload', module: 'redis', script: 'redis reload' },
        voice: 'converge',
        hook: { hook: 'reload', module: 'redis', tail: ['ok'] },
      },
    ] as const;
    const done = {
      result: { command: 'converge', node: 'box', act: { told: [...told], stopped: false } },
    } as Parameters<typeof saidOf>[0];
    assert.equal(
      saidOf(done),
      'wrote /etc/redis.conf\nran reload of redis\n  > ok\nbox is as assigned',
    );
    assert.equal(untoldOf(done), 'box is as assigned');
    const stopped = {
      result: { command: 'converge', node: 'box', act: { told: [told[0]], stopped: true } },
    } as Parameters<typeof saidOf>[0];
    assert.equal(saidOf(stopped), 'wrote /etc/redis.conf');
    assert.equal(untoldOf(stopped), '');
    const idle = { result: { command: 'converge', node: 'box', act: 'nothing-to-do' } } as const;
    assert.equal(saidOf(idle), 'box is as assigned: nothing to do');
    assert.equal(untoldOf(idle), undefined, 'nothing was told: all of said is printed');
  });

  it('a refusal with no result says nothing', () => {
    const refused: Outcome = {
      refusal: { kind: 'failed', code: 'failed', command: 'take', message: 'no' },
    };
    assert.equal(saidOf(refused), '');
  });
});
