/**
 * A converge act stopped at a failed start, as a node journals it: its typed result and
 * refusal. The store contract reads them back whole; journal-words.test.ts makes their
 * words. Types only, so that the contract suite stays on the standards-only core.
 */
import type { JournaledResult } from '../../src/model/journaled.ts';
import type { RefusalOf } from '../../src/model/refusal.ts';

export function stoppedConverge(node: string) {
  const result = {
    command: 'converge',
    node,
    act: {
      told: [
        {
          step: {
            do: 'write',
            module: 'app',
            path: '/etc/app.conf',
            mode: '0644',
            why: { because: 'differs', diff: ['-port=80', '+port=8080'] },
          },
          voice: 'converge',
        },
        {
          step: { do: 'start', module: 'app', script: 'systemctl start app' },
          voice: 'converge',
          hook: { hook: 'start', module: 'app', tail: ['app: address in use'] },
        },
      ],
      stopped: true,
    },
  } satisfies JournaledResult;
  const refusal = {
    kind: 'stopped',
    code: 'hook_failed',
    command: 'converge',
    node,
    module: 'app',
    how: 'failed',
    why: "app's start failed (exit 1)",
  } satisfies RefusalOf<'stopped'>;
  const entry = {
    at: '2030-05-01T00:00:02.000Z',
    actor: 'alice',
    via: 'api',
    act: 'converge',
    node,
    outcome: 'failed',
    code: 'hook_failed',
    result,
    refusal,
  } as const;
  return { result, refusal, entry };
}
