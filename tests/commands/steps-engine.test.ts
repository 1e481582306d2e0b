/**
 * The step engine alone: typed steps carried out on a machine and stores in memory, with
 * no planner and no command around them. What it does is read back from the machine, the
 * node's record and the vault.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import * as v from 'valibot';
import type { CommandContext } from '../../src/commands/context.ts';
import { carryOut } from '../../src/commands/steps/engine.ts';
import type { ModuleSteps } from '../../src/commands/steps/step.ts';
import { type CatalogEntry, parseDefinition } from '../../src/model/catalog.ts';
import { SettingsSchema } from '../../src/model/settings.ts';
import { memoryStores } from '../../src/stores/memory-store.ts';
import type { NodeStore } from '../../src/stores/stores.ts';
import { fingerprintWith } from '../../src/utils/digest.ts';
import { toldLines } from '../../src/words/steps.ts';
import { type MemoryMachine, memoryMachine } from '../core/memory-machine.ts';

const SVC = {
  files: { '/etc/svc/svc.conf': { content: 'password {{secret password}}\n' } },
  secrets: { password: { path: '/etc/svc/password', bytes: 16 } },
  start: 'svc start',
  reload: 'svc reload',
};

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

describe('the step engine', () => {
  let machine: MemoryMachine;
  let store: NodeStore;
  let context: CommandContext;
  beforeEach(async () => {
    machine = memoryMachine();
    store = await memoryStores().openNode('box', 'converge');
    context = {
      store,
      settings: v.parse(SettingsSchema, { nodes: { box: { root: '/' } } }),
      catalog: {
        names: async () => ['svc'],
        entry: async (name): Promise<CatalogEntry> =>
          parseDefinition(name, `${name}.json`, JSON.stringify(SVC)),
      },
      machine,
      actor: 'tester',
      via: 'cli',
      now: () => new Date('2026-11-25T15:00:00.000Z'),
      line: {},
    };
  });

  const install: ModuleSteps = {
    module: 'svc',
    steps: [
      { do: 'manage', module: 'svc', started: false },
      { do: 'mkdir', module: 'svc', path: '/var/lib/svc' },
      {
        do: 'mint',
        module: 'svc',
        secret: 'password',
        path: '/etc/svc/password',
        bytes: 16,
        mode: '0600',
      },
      {
        do: 'write',
        module: 'svc',
        path: '/etc/svc/svc.conf',
        mode: '0644',
        why: { because: 'install' },
      },
      { do: 'start', module: 'svc', script: 'svc start' },
    ],
  };

  it('carries out every step in order, tells each, and records the module as started', async () => {
    const told: string[] = [];
    context.tell = (event) =>
      told.push(event.kind === 'step' ? `${event.node} ${event.told.step.do}` : event.kind);
    const carried = await carryOut([install], 'box', context, 'converge');
    assert.equal(carried.failure, undefined);
    assert.deepEqual(told, [
      'box manage',
      'box mkdir',
      'box mint',
      'box write',
      'hook-started',
      'box start',
    ]);
    assert.deepEqual(
      carried.told.flatMap((done) => toldLines(done, 'box')),
      [
        'berth manages svc on box',
        'created /var/lib/svc',
        'minted password into the vault and wrote it to /etc/svc/password',
        'wrote /etc/svc/svc.conf',
        'ran start of svc',
      ],
    );
    const password = text((await store.vault.get('svc', 'password'))?.value);
    assert.equal(text(machine.files.get('/etc/svc/password')?.bytes), password);
    assert.equal(text(machine.files.get('/etc/svc/svc.conf')?.bytes), `password ${password}\n`);
    assert.equal(machine.files.get('/etc/svc/password')?.mode, 0o600);
    assert.ok(machine.directories.has('/var/lib/svc'));
    assert.deepEqual(machine.ran, ['svc start']);
    assert.equal((await store.record()).managed.svc?.started, true);
  });

  it('stops at a failing reload, says where, and keeps the reload owed in the record', async () => {
    await carryOut([install], 'box', context, 'converge');
    machine.hookResult = { code: 1, output: 'svc.conf:1: syntax error' };
    const carried = await carryOut(
      [
        {
          module: 'svc',
          steps: [
            {
              do: 'write',
              module: 'svc',
              path: '/etc/svc/svc.conf',
              mode: '0644',
              why: { because: 'missing' },
            },
            { do: 'reload', module: 'svc', script: 'svc reload' },
          ],
        },
      ],
      'box',
      context,
      'converge',
    );
    assert.deepEqual(carried.failure, {
      module: 'svc',
      how: 'failed',
      why: 'reload of svc failed (exit 1): svc.conf:1: syntax error',
      code: 'hook_failed',
    });
    assert.deepEqual(
      carried.told.map((done) => done.step.do),
      ['write'],
    );
    assert.deepEqual((await store.record()).managed.svc?.pending, ['reload']);

    machine.hookResult = { code: 0, output: '' };
    const again = await carryOut(
      [{ module: 'svc', steps: [{ do: 'reload', module: 'svc', script: 'svc reload' }] }],
      'box',
      context,
      'converge',
    );
    assert.equal(again.failure, undefined);
    assert.equal((await store.record()).managed.svc?.pending, undefined, 'owed no more');
  });

  it('does nothing once told to stop, and says it stopped before the module', async () => {
    const stop = new AbortController();
    stop.abort('berth was interrupted by SIGINT');
    context.signal = stop.signal;
    const carried = await carryOut([install], 'box', context, 'converge');
    assert.deepEqual(carried, {
      told: [],
      failure: {
        module: 'svc',
        how: 'stopped',
        why: 'berth was interrupted by SIGINT',
        code: 'interrupted',
      },
    });
    assert.equal(machine.files.size, 0);
    assert.deepEqual((await store.record()).managed, {});
  });

  it('keeps a found secret only while it has the fingerprint its plan saw', async () => {
    machine.files.set('/etc/svc/password', {
      bytes: new TextEncoder().encode('s3cret'),
      mode: 0o600,
    });
    const key = await store.vault.fingerprintKey();
    const keep = (fingerprint: string): ModuleSteps[] => [
      {
        module: 'svc',
        steps: [
          { do: 'keep', module: 'svc', secret: 'password', path: '/etc/svc/password', fingerprint },
        ],
      },
    ];
    const stale = await carryOut(
      keep(await fingerprintWith(key, new TextEncoder().encode('old'))),
      'box',
      context,
      'take',
    );
    assert.match(
      String(stale.failure?.why),
      /^secret password of svc changed on box since the account was taken/,
    );
    assert.equal(await store.vault.get('svc', 'password'), undefined, 'nothing kept');

    const seen = await fingerprintWith(key, new TextEncoder().encode('s3cret'));
    const kept = await carryOut(keep(seen), 'box', context, 'take');
    assert.equal(kept.failure, undefined);
    assert.deepEqual(
      kept.told.flatMap((done) => toldLines(done, 'box')),
      ['secret password: read into the vault from /etc/svc/password'],
    );
    const entry = await store.vault.get('svc', 'password');
    assert.equal(text(entry?.value), 's3cret');
    assert.equal(entry?.origin, 'found on box at /etc/svc/password');
  });

  it('a batch of writes that the machine cannot make tells none of them, and fails in its words', async () => {
    machine.unreachable = true;
    const carried = await carryOut(
      [{ module: 'svc', steps: install.steps.slice(1, 2) }],
      'box',
      context,
      'converge',
    );
    assert.deepEqual(carried.told, []);
    assert.deepEqual(carried.failure, {
      module: 'svc',
      how: 'failed',
      why: 'box cannot be reached',
      code: 'unreachable',
    });
  });
});
