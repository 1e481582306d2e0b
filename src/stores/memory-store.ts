import { emptyRecord, type NodeRecord } from '../model/state.ts';
import { openingEach, type Seal } from '../vault/seal.ts';
import { keptCa, resealedCa, type SealedCa } from './kept-ca.ts';
import {
  clippedEntry,
  type JournalEntry,
  KEPT_PREVIEWS,
  type KeptPreview,
  type KeptSurvey,
  type LockHolder,
  LockTimeout,
  lockNotHad,
  type NodeStore,
  queriedJournals,
  StoreError,
  type Stores,
} from './stores.ts';
import { type Lines, waitTurn } from './turns.ts';

/** A value as memory keeps it: sealed by the stores' seal. */
interface KeptValue {
  sealed: string;
  origin: string;
  at: string;
}

interface NodeData {
  record: NodeRecord;
  key: string | undefined;
  secrets: Map<string, KeptValue>;
  previews: KeptPreview[];
  survey?: KeptSurvey;
  journal: JournalEntry[];
}

export interface MemoryStoreOptions {
  /** How long an act waits for a node's lock; 10 s as every store. */
  lockWaitMs?: number;
  /** Named as the lock's host in the words of whoever waits. */
  host?: string;
  /** Seals what the vault keeps; without one, values are kept as they are (memory is no rest). */
  seal?: Seal;
}

/** The seal of stores given none: values kept as text, as they are. */
const asTheyAre: Seal = {
  seal: async (values) =>
    values.map((value) => btoa(Array.from(value, (byte) => String.fromCharCode(byte)).join(''))),
  open: async (kept) => Uint8Array.from(atob(kept), (char) => char.charCodeAt(0)),
};

/**
 * Stores held in memory, for one process: for tests, trials, and a host (Deno, the
 * edge) that brings no file system. Standards only. Records are copied in and out,
 * so what a caller holds never changes what is kept.
 */
export function memoryStores(options: MemoryStoreOptions = {}): Stores {
  const lockWaitMs = options.lockWaitMs ?? 10_000;
  const host = options.host ?? 'this process';
  const seal = options.seal ?? asTheyAre;
  const nodes = new Map<string, NodeData>();
  const unplaced: JournalEntry[] = [];
  const holders = new Map<string, LockHolder>();
  const lines: Lines = new Map();
  let ca: SealedCa | undefined;
  /** Whether the stores hold no sealed value: only then may berth make itself an identity. */
  const fresh = async () =>
    ca === undefined &&
    [...nodes.values()].every((each) => each.key === undefined && each.secrets.size === 0);

  const dataOf = (node: string) => {
    let data = nodes.get(node);
    if (!data) {
      data = {
        record: emptyRecord(),
        key: undefined,
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
      throw new LockTimeout(lockNotHad(holders.get(node), node, lockWaitMs));
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
      const opened = new Map<string, Uint8Array>();
      const openValue = async (name: string, kept: KeptValue) => {
        let value = opened.get(name);
        if (value === undefined) {
          const [module, secret] = name.split('/');
          value = await seal.open(kept.sealed, `value of ${secret} of ${module} on ${node}`);
          opened.set(name, value);
        }
        return value.slice();
      };
      let key: Uint8Array | undefined;
      const openKey = async (sealed: string) => {
        key ??= await seal.open(sealed, `fingerprint key of ${node}`);
        return key.slice();
      };
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
          async fingerprintKey() {
            if (data.key === undefined) {
              const made = crypto.getRandomValues(new Uint8Array(32));
              const [sealed = ''] = await seal.seal([made], fresh);
              data.key ??= sealed;
            }
            return openKey(data.key);
          },
          async get(module, secret) {
            const kept = data.secrets.get(`${module}/${secret}`);
            if (!kept) return undefined;
            const value = await openValue(`${module}/${secret}`, kept);
            return { value, origin: kept.origin, at: kept.at };
          },
          async put(...kept) {
            check();
            const sealed = await seal.seal(
              kept.map((item) => item.entry.value),
              fresh,
            );
            kept.forEach(({ module, secret, entry }, index) => {
              const name = `${module}/${secret}`;
              data.secrets.set(name, {
                sealed: sealed[index] ?? '',
                origin: entry.origin,
                at: entry.at,
              });
              opened.set(name, entry.value.slice());
            });
          },
          async drop(...names) {
            check();
            for (const { module, secret } of names) {
              data.secrets.delete(`${module}/${secret}`);
              opened.delete(`${module}/${secret}`);
            }
          },
          kept: async () =>
            [...data.secrets.keys()].map((name) => {
              const [module = '', secret = ''] = name.split('/');
              return { module, secret };
            }),
          all: async (modules) =>
            Promise.all(
              [...data.secrets]
                .filter(([name]) => !modules || modules.has(name.split('/')[0] ?? ''))
                .map(async ([name, kept]) => {
                  const [module = '', secret = ''] = name.split('/');
                  return { module, secret, value: await openValue(name, kept) };
                }),
            ),
          async reseal() {
            check();
            const { unopened, tryOpen } = openingEach();
            const sealedKey = data.key;
            const keyValue =
              sealedKey === undefined
                ? undefined
                : await tryOpen(`the fingerprint key of ${node}`, () => openKey(sealedKey));
            const names = [...data.secrets.keys()];
            const values: (Uint8Array | undefined)[] = [];
            for (const name of names) {
              const [module, secret] = name.split('/');
              const kept = data.secrets.get(name) as KeptValue;
              values.push(
                await tryOpen(`${secret} of ${module} on ${node}`, () => openValue(name, kept)),
              );
            }
            const toSeal = [keyValue, ...values].filter((value) => value !== undefined);
            const sealed = await seal.seal(toSeal, async () => false);
            if (keyValue !== undefined) data.key = sealed.shift();
            names.forEach((name, index) => {
              const kept = data.secrets.get(name);
              if (kept && values[index] !== undefined)
                data.secrets.set(name, { ...kept, sealed: sealed.shift() ?? '' });
            });
            return { resealed: toSeal.length, unopened };
          },
        },
        async keepPreview(preview) {
          check();
          const kept = data.previews.filter((item) => item.digest !== preview.digest);
          data.previews = [...kept, structuredClone(preview)].slice(-KEPT_PREVIEWS);
        },
        findPreview: async (digest) =>
          structuredClone(data.previews.find((item) => item.digest === digest)),
        async keepSurvey(survey) {
          check();
          data.survey = structuredClone(survey);
        },
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
    readJournal: async (query) =>
      queriedJournals(
        [
          { journal: null, entries: unplaced },
          ...[...nodes].map(([node, data]) => ({ journal: node, entries: data.journal })),
        ].map(({ journal, entries }) => ({
          journal,
          lines: entries.map((entry) => ({ entry: structuredClone(entry) })),
        })),
        query,
      ),
    readSurveys: async (wanted) =>
      [...nodes.keys()]
        .filter((node) => wanted === undefined || wanted.includes(node))
        .sort()
        .flatMap((node) => {
          const survey = nodes.get(node)?.survey;
          return survey ? [structuredClone(survey)] : [];
        }),
    lockHolders: async (nodes) =>
      [...holders.values()]
        .filter((holder) => nodes === undefined || nodes.includes(holder.node))
        .map((holder) => ({ ...holder })),
    readCa: async () => ca && keptCa(ca, seal),
    async keepCa(made) {
      const [sealed = ''] = await seal.seal([made.key], fresh);
      // Sealing awaits: another keep may have come first meanwhile, and wins.
      ca ??= { certificate: made.certificate, at: made.at, sealed };
      return keptCa(ca, seal);
    },
    async resealCa() {
      if (!ca) return { resealed: 0, unopened: [] };
      const was = ca;
      const { sealed, resealed } = await resealedCa(was, seal);
      if (sealed !== undefined && ca === was) ca = { ...was, sealed };
      return resealed;
    },
    close: async () => {},
  };
}
