import { MachineError } from '../machines/machine.ts';
import type { RefusalOf } from '../model/refusal.ts';
import type { CommandContext } from './context.ts';
import type { Outcome } from './outcome.ts';

/** How long a refresh waits for the package manager's lock unless told (`--lock-timeout`). */
const REFRESH_LOCK_WAIT_MS = 10_000;

/**
 * `--refresh`: the node's package lists fetched anew before a converge preview, an act of
 * its own on the node, journaled as `refresh` whether it was done or refused. Answers the
 * refusal, with apt's words, when it failed; nothing when it was done.
 */
export async function refreshLists(
  node: string,
  context: CommandContext,
): Promise<Outcome | undefined> {
  const waitMs = context.line.lockTimeout ?? REFRESH_LOCK_WAIT_MS;
  let refusal: RefusalOf<'refresh-busy' | 'refresh-failed'> | undefined;
  try {
    const refreshed = await context.machine.refreshPackages({ waitMs });
    if (!refreshed.ok)
      refusal = refreshed.busy
        ? { kind: 'refresh-busy', code: 'refresh_failed', node, ...refreshed.busy }
        : {
            kind: 'refresh-failed',
            code: 'refresh_failed',
            node,
            message: refreshed.errors.join(' '),
          };
  } catch (thrown) {
    if (!(thrown instanceof MachineError)) throw thrown;
    refusal = { kind: 'refresh-failed', code: 'refresh_failed', node, message: thrown.message };
  }
  await context.store.journal({
    at: context.now().toISOString(),
    actor: context.actor,
    via: context.via,
    act: 'refresh',
    node,
    target: context.target,
    outcome: refusal === undefined ? 'done' : 'refused',
    ...(refusal === undefined ? {} : { code: refusal.code }),
    ...(refusal === undefined ? { result: { command: 'refresh', node } } : { refusal }),
  });
  return refusal === undefined ? undefined : { refusal };
}
