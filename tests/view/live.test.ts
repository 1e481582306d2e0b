/** Following acts on the store from its locks and journal, as another berth writes them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JournalLine, LockHolder } from '../../src/stores/stores.ts';
import { followStore, type LiveEvent } from '../../src/view/live.ts';

describe('following the store', () => {
  it("tells each lock another berth holds, each act journaled since, and a lock let go with no act; never the view's own", async () => {
    let holders: LockHolder[] = [];
    let journal: JournalLine[] = [
      {
        entry: {
          at: '2000-01-01T00:00:00.000Z',
          actor: 'ann',
          via: 'cli',
          act: 'converge',
          node: 'web1',
          outcome: 'done',
          said: '',
        },
      },
    ];
    const self = { host: 'ops1', pid: 10 };
    const live = followStore(
      { holders: async () => holders, journal: async () => journal },
      self,
      5,
    );
    const told: LiveEvent[] = [];
    const unfollow = live.follow((event) => told.push(event));
    const settle = () => new Promise((resolve) => setTimeout(resolve, 40));
    holders = [
      { host: 'ops2', pid: 7, act: 'converge', node: 'web1', since: '2030-01-01T00:00:00.000Z' },
      { host: 'ops2', pid: 7, act: 'converge', node: 'web2', since: '2030-01-01T00:00:00.000Z' },
      { host: 'ops1', pid: 10, act: 'converge', node: 'web3', since: '2030-01-01T00:00:00.000Z' },
    ];
    await settle();
    holders = [];
    journal = [
      ...journal,
      {
        entry: {
          at: '2099-01-01T00:00:00.000Z',
          actor: 'bob',
          via: 'api',
          act: 'converge',
          node: 'web1',
          outcome: 'failed',
          said: '',
          error: 'start failed',
        },
      },
    ];
    await settle();
    unfollow();
    assert.deepEqual(told, [
      {
        kind: 'acting',
        node: 'web1',
        act: 'converge',
        by: 'berth process 7 on ops2',
        since: '2030-01-01T00:00:00.000Z',
      },
      {
        kind: 'acting',
        node: 'web2',
        act: 'converge',
        by: 'berth process 7 on ops2',
        since: '2030-01-01T00:00:00.000Z',
      },
      {
        kind: 'ended',
        node: 'web1',
        act: 'converge',
        actor: 'bob (api)',
        outcome: 'failed',
        at: '2099-01-01T00:00:00.000Z',
        words: 'start failed',
      },
      { kind: 'let-go', node: 'web2' },
    ]);
  });
});
