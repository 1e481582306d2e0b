import type { JournalEntry, JournalLine, LockHolder } from '../stores/stores.ts';
import { entryWords } from '../words/journal.ts';

/** What the page is told, as acts run on the store, by any berth. */
export type LiveEvent =
  /** A berth holds the node's lock: an act (or a preview) is under way there. */
  | { kind: 'acting'; node: string; act: string; by: string; since: string }
  /** The journal has a new act on the node: who, what, how it ended. */
  | {
      kind: 'ended';
      node: string;
      act: string;
      module?: string;
      actor: string;
      outcome: JournalEntry['outcome'];
      at: string;
      words?: string;
    }
  /** The node's lock was let go with no act journaled: it was a preview. */
  | { kind: 'let-go'; node: string };

/** What the poller reads: the stores' lock holders and journal. */
export interface LiveReads {
  holders(): Promise<LockHolder[]>;
  journal(): Promise<JournalLine[] | { refused: string }>;
}

export interface Live {
  /** Tells `listener` every event from now on, and at once each node whose lock is held now. */
  follow(listener: (event: LiveEvent) => void): () => void;
  stop(): void;
}

/**
 * Follows acts on the store from any controller, by reading what every berth already
 * writes: the nodes' locks (held from an act's start to its end) and the journal (a line
 * at each act's end). Read every `everyMs` while a page follows, not at all otherwise.
 * Locks held by this process (the view's own previews) are not shown.
 */
export function followStore(
  reads: LiveReads,
  self: { host: string; pid: number },
  everyMs: number,
  now: () => Date = () => new Date(),
): Live {
  const listeners = new Set<(event: LiveEvent) => void>();
  let held = new Map<string, LockHolder>();
  let since = '';
  const told = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling: Promise<void> | undefined;

  const tell = (event: LiveEvent) => {
    for (const listener of listeners) listener(event);
  };

  const poll = async () => {
    const holders = (await reads.holders().catch(() => [])).filter(
      (holder) => !(holder.pid === self.pid && holder.host === self.host),
    );
    const next = new Map(holders.map((holder) => [holder.node, holder]));
    for (const [node, holder] of next) {
      const was = held.get(node);
      if (was?.since === holder.since && was.pid === holder.pid) continue;
      tell({
        kind: 'acting',
        node,
        act: holder.act,
        by: `berth process ${holder.pid} on ${holder.host}`,
        since: holder.since,
      });
    }
    const journal = await reads.journal();
    const ended = new Set<string>();
    if (Array.isArray(journal))
      for (const line of journal) {
        if (!('entry' in line) || line.entry.at < since) continue;
        const { entry } = line;
        const { error } = entryWords(entry);
        const key = `${entry.at}\n${entry.node}\n${entry.act}\n${entry.actor}`;
        if (told.has(key)) continue;
        told.add(key);
        ended.add(entry.node);
        tell({
          kind: 'ended',
          node: entry.node,
          act: entry.act,
          ...(entry.module === undefined ? {} : { module: entry.module }),
          actor: `${entry.actor} (${entry.via})`,
          outcome: entry.outcome,
          at: entry.at,
          ...(error === undefined ? {} : { words: error }),
        });
      }
    for (const node of held.keys())
      if (!next.has(node) && !ended.has(node)) tell({ kind: 'let-go', node });
    held = next;
  };

  const schedule = () => {
    timer = setTimeout(() => {
      polling = poll()
        .catch(() => {})
        .finally(() => {
          polling = undefined;
          if (listeners.size > 0) schedule();
        });
    }, everyMs);
    timer.unref?.();
  };

  return {
    follow(listener) {
      if (listeners.size === 0) {
        // What the journal held before anyone followed is the journal page's, not news.
        since = now().toISOString();
        held = new Map();
        if (!polling) {
          polling = poll()
            .catch(() => {})
            .finally(() => {
              polling = undefined;
            });
          schedule();
        }
      } else
        for (const holder of held.values())
          listener({
            kind: 'acting',
            node: holder.node,
            act: holder.act,
            by: `berth process ${holder.pid} on ${holder.host}`,
            since: holder.since,
          });
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && timer !== undefined) clearTimeout(timer);
      };
    },
    stop() {
      listeners.clear();
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
