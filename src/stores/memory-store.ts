import { emptyRecord, type NodeRecord } from '../state.ts';
import {
  clippedEntry,
  type JournalEntry,
  KEPT_PREVIEWS,
  type KeptPreview,
  type LockHolder,
  lockNotHad,
  mergeJournals,
  type NodeStore,
  StoreError,
  type Stores,
  type VaultEntry,
} from './stores.ts';
import { type Lines, waitTurn } from './turns.ts';

interface NodeData {
  record: NodeRecord;
  key: Uint8Array;
  secrets: Map<string, VaultEntry>;
  previews: KeptPreview[];
  journal: JournalEntry[];
}

export interface MemoryStoreOptions {
  /** How long an act waits for a node's lock; 10 s as every store. */
  lockWaitMs?: number;
  /** Named as the lock's host in the words of whoever waits. */
  host?: string;
}

/**
 * Stores held in memory, for one process: for tests, trials, and a host (Deno, the
 * edge) that brings no file system. Standards only. Records are copied in and out,
 * so what a caller holds never changes what is kept.
 */
export function memoryStores(options: MemoryStoreOptions = {}): Stores {
  const lockWaitMs = options.lockWaitMs ?? 10_000;
  const host = options.host ?? 'this process';
  const nodes = new Map<string, NodeData>();
  const unplaced: JournalEntry[] = [];
  const holders = new Map<string, LockHolder>();
  const lines: Lines = new Map();

  const dataOf = (node: string) => {
    let data = nodes.get(node);
    if (!data) {
      data = {
        record: emptyRecord(),
        key: crypto.getRandomValues(new Uint8Array(32)),
        secrets: new Map(),
        previews: [],
        journal: [],
      };
      nodes.set(node, data);
    }
    return data;
  };

  /** Waits for the node's turn, at most lockWaitMs; resolves to the function that lets go. */
  async function takeTurn(node: string, act: string): Promise<() => void> {
    const turn = await waitTurn(lines, node, lockWaitMs);
    if (!turn.inTime) {
      turn.pass();
      throw new StoreError(lockNotHad(holders.get(node), node, lockWaitMs));
    }
    holders.set(node, { host, pid: 0, act, node, since: new Date().toISOString() });
    return () => {
      holders.delete(node);
      turn.pass();
    };
  }

  return {
    open: async () => {},
    async openNode(node, act) {
      const release = await takeTurn(node, act);
      const data = dataOf(node);
      let open = true;
      const check = () => {
        if (!open) throw new StoreError(`the records of node ${node} were closed`);
      };
      const store: NodeStore = {
        node,
        record: async () => structuredClone(data.record),
        async saveRecord(next) {
          check();
          data.record = structuredClone(next);
        },
        vault: {
          fingerprintKey: async () => data.key.slice(),
          get: async (module, secret) => copyEntry(data.secrets.get(`${module}/${secret}`)),
          async put(...kept) {
            check();
            for (const { module, secret, entry } of kept)
              data.secrets.set(`${module}/${secret}`, copyEntry(entry) as VaultEntry);
          },
          all: async () =>
            [...data.secrets].map(([key, entry]) => {
              const [module = '', secret = ''] = key.split('/');
              return { module, secret, value: entry.value.slice() };
            }),
        },
        async keepPreview(preview) {
          check();
          const kept = data.previews.filter((item) => item.digest !== preview.digest);
          data.previews = [...kept, structuredClone(preview)].slice(-KEPT_PREVIEWS);
        },
        findPreview: async (digest) =>
          structuredClone(data.previews.find((item) => item.digest === digest)),
        async journal(entry) {
          check();
          data.journal.push(clippedEntry(entry));
        },
        async close() {
          if (!open) return;
          open = false;
          release();
        },
      };
      return store;
    },
    async journalUnplaced(entry) {
      unplaced.push(clippedEntry(entry));
    },
    listNodes: async () => [...nodes.keys()].sort(),
    readNode: async (node) => structuredClone(nodes.get(node)?.record ?? emptyRecord()),
    readJournal: async () =>
      mergeJournals(
        [unplaced, ...[...nodes.values()].map((data) => data.journal)].map((journal) =>
          journal.map((entry) => ({ entry: structuredClone(entry) })),
        ),
      ),
    lockHolders: async (nodes) =>
      [...holders.values()]
        .filter((holder) => nodes === undefined || nodes.includes(holder.node))
        .map((holder) => ({ ...holder })),
    close: async () => {},
  };
}

function copyEntry(entry: VaultEntry | undefined): VaultEntry | undefined {
  return entry && { ...entry, value: entry.value.slice() };
}
