import { MachineError } from '../machines/machine.ts';
import { refreshedWords } from '../words/packages.ts';
import type { CommandContext } from './context.ts';
import type { Outcome } from './outcome.ts';

/** How long a refresh waits for the package manager's lock unless told (`--lock-timeout`). */
const REFRESH_LOCK_WAIT_MS = 10_000;

/**
 * `--refresh`: the node's package lists fetched anew before a converge preview, an act of
 * its own on the node, journaled as `refresh` whether it was done or refused. Answers the
 * refusal, in apt's words, when it failed; nothing when it was done.
 */
export async function refreshLists(
  node: string,
  context: CommandContext,
): Promise<Outcome | undefined> {
  const waitMs = context.line.lockTimeout ?? REFRESH_LOCK_WAIT_MS;
  let error: string | undefined;
  try {
    const refreshed = await context.machine.refreshPackages({ waitMs });
    if (!refreshed.ok)
      error = refreshed.busy
        ? `apt on ${node} is busy (held by ${refreshed.busy.command}, pid ${refreshed.busy.pid}); its package lists were not refreshed`
        : `refreshing ${node}'s package lists failed: ${refreshed.errors.join(' ')}`;
  } catch (thrown) {
    if (!(thrown instanceof MachineError)) throw thrown;
    error = `refreshing ${node}'s package lists failed: ${thrown.message}`;
  }
  await context.store.journal({
    at: context.now().toISOString(),
    actor: context.actor,
    via: context.via,
    act: 'refresh',
    node,
    target: context.target,
    outcome: error === undefined ? 'done' : 'refused',
    ...(error === undefined ? {} : { code: 'refresh_failed' as const }),
    said: error === undefined ? refreshedWords(node) : '',
    ...(error === undefined ? {} : { error }),
  });
  return error === undefined ? undefined : { error, code: 'refresh_failed' };
}
