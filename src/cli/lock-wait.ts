import type { Stores } from '../stores/stores.ts';

/** After this long waiting for a lock, berth says whose it is: silence reads as a hang. */
export const SAY_WAITING_AFTER_MS = 1_000;

/**
 * The stores, saying on `say` (standard error) when an act has waited a second for its
 * node's lock, and who holds it: "waiting for the lock of web1, held by berth process
 * 4242 on ops1 (converge, since …)". The holder is read then, from the stores.
 */
export function sayingWhenWaiting(stores: Stores, say: (line: string) => void): Stores {
  return {
    ...stores,
    async openNode(node, act) {
      let opened = false;
      const timer = setTimeout(async () => {
        const holder = (await stores.lockHolders([node]).catch(() => [])).find(
          (each) => each.node === node,
        );
        if (!opened)
          say(
            holder
              ? `waiting for the lock of ${node}, held by berth process ${holder.pid} on ${holder.host} (${holder.act}, since ${holder.since})`
              : `waiting for the lock of ${node}, held by another act`,
          );
      }, SAY_WAITING_AFTER_MS);
      try {
        return await stores.openNode(node, act);
      } finally {
        opened = true;
        clearTimeout(timer);
      }
    },
  };
}
