import * as v from 'valibot';
import { BlockerSchema } from '../model/blocker.ts';
import { CodeSchema } from '../model/codes.ts';
import { ConvergePreviewResultSchema } from '../model/converge-preview.ts';
import { JournaledResultSchema } from '../model/journaled.ts';
import { type RefusalOf, RefusalSchema } from '../model/refusal.ts';
import {
  BlockerReportSchema,
  NodeReportSchema,
  NodeResultSchema,
  StepReportSchema,
} from '../model/result.ts';
import type { NodeRecord } from '../model/state.ts';

/**
 * The version of the journal's entries berth writes. Version 3 keeps the act's typed result
 * and typed refusal, its words made when it is read; version 2 kept its target, digest and
 * typed outcome beside its words (`said`, `error`); an entry without `entry_version` is an
 * earlier berth's (version 1), which kept neither. Every version is read as it was written.
 */
export const JOURNAL_ENTRY_VERSION = 3;

/** What every version of an entry keeps: who did what, where, when, and how it ended. */
const EntryEntries = {
  at: v.string(),
  actor: v.string(),
  via: v.picklist(['cli', 'api']),
  act: v.string(),
  /** The node acted on; for an act refused before any node, the target as it was asked for. */
  node: v.string(),
  /** The target the act was asked for (`@web`, `web1,web2`, or the node alone). */
  target: v.optional(v.string()),
  module: v.optional(v.string()),
  /** On a take or converge: the digest of the node's preview the act was on. */
  digest: v.optional(v.string()),
  outcome: v.picklist(['done', 'refused', 'failed']),
  /** Why it was refused or failed (docs/codes.md). */
  code: v.optional(CodeSchema),
  /** The steps done (a failed act's up to where it stopped). */
  steps: v.optional(v.array(StepReportSchema)),
};

/**
 * One act as berth journals it. Never holds a secret value. Its outcome: done; refused,
 * nothing begun (a gate, a blocker, a grant); or failed, begun and stopped at a step (a
 * hook that exits non-zero, a write that fails): what was done in `result`, why it stopped
 * in `refusal`, both typed, their words made when the entry is read.
 */
const TypedEntrySchema = v.object({
  entry_version: v.literal(JOURNAL_ENTRY_VERSION),
  ...EntryEntries,
  /** The blockers that stood, as values. */
  blockers: v.optional(v.array(BlockerSchema)),
  result: v.optional(JournaledResultSchema),
  refusal: v.optional(RefusalSchema),
});

/** An entry an earlier berth wrote (version 1 or 2): its words as they were said then. */
const WordedEntrySchema = v.object({
  entry_version: v.optional(v.picklist([1, 2])),
  ...EntryEntries,
  blockers: v.optional(v.array(BlockerReportSchema)),
  said: v.string(),
  error: v.optional(v.string()),
});

/** A journal entry as read back, of this berth or an earlier one. */
export const JournalEntrySchema = v.union([TypedEntrySchema, WordedEntrySchema]);
export type JournalEntry = v.InferOutput<typeof JournalEntrySchema>;
export type TypedEntry = v.InferOutput<typeof TypedEntrySchema>;

/** An act to journal: the stores give it this berth's version. */
export type NewJournalEntry = Omit<TypedEntry, 'entry_version'>;

/**
 * What `berth log` asks of the journal: the acts about some nodes or targets (an entry's
 * node or target among them), since a time (ISO 8601), and of those the last `tail`.
 * Every act, oldest first, when empty.
 */
export interface JournalQuery {
  about?: readonly string[];
  since?: string;
  tail?: number;
}

/** A journal line as read back: an entry, or a line that is not one (a hand edit). */
export type JournalLine = { entry: JournalEntry } | { notAnEntry: string; where: string };

/** A secret value in the vault, with where it came from. */
export interface VaultEntry {
  value: Uint8Array;
  origin: string;
  at: string;
}

/**
 * A preview kept by digest, so that a refused act can say what changed.
 * `basis` holds what the preview was computed from: fingerprints, never values.
 */
export const KeptPreviewSchema = v.object({
  digest: v.string(),
  kind: v.picklist(['take', 'converge']),
  node: v.string(),
  at: v.string(),
  basis: v.unknown(),
  /**
   * Kept by the digest of a plan file's whole content (`--out`), beside the preview it
   * holds (`of`, that preview's digest): `berth act FILE` acts only on a file as berth
   * wrote it. `acted`: when and by whom the plan was acted on; it is not acted on again.
   */
  plan: v.optional(
    v.object({
      of: v.string(),
      acted: v.optional(v.object({ at: v.string(), by: v.string() })),
    }),
  ),
});
export type KeptPreview = v.InferOutput<typeof KeptPreviewSchema>;

/** What every version of a kept survey holds: whose it is, when and by whom it was made. */
const SurveyEntries = {
  node: v.string(),
  at: v.string(),
  actor: v.string(),
  via: v.picklist(['cli', 'api']),
  /**
   * The node's facts as that survey told them, when its plan read them: what `berth api
   * --issuer MODULE@NODE` reads of a node it cannot reach.
   */
  facts: v.optional(v.record(v.string(), v.string())),
};

/** The version of a kept survey berth writes: 2 keeps the preview typed, its words made when read. */
export const KEPT_SURVEY_VERSION = 2;

/**
 * A node's newest survey: its converge preview, whole, as any berth made it last (the
 * command line, the API, the view), so that whoever reads the fleet later reads it
 * without surveying again: the node's part of the typed result (its blockers as values),
 * the preview's typed result (each file's diff whole), or its typed refusal.
 */
const TypedSurveySchema = v.object({
  survey_version: v.literal(KEPT_SURVEY_VERSION),
  ...SurveyEntries,
  report: NodeResultSchema,
  result: v.optional(ConvergePreviewResultSchema),
  refusal: v.optional(RefusalSchema),
});

/**
 * A survey an earlier berth kept: its words as they were said then (`said`, with each
 * file's whole diff; `refused`, its refusal), shown as they were.
 */
const WordedSurveySchema = v.object({
  ...SurveyEntries,
  report: NodeReportSchema,
  said: v.string(),
  refused: v.optional(v.string()),
});

/** A kept survey as read back, of this berth or an earlier one. */
export const KeptSurveySchema = v.union([TypedSurveySchema, WordedSurveySchema]);
export type KeptSurvey = v.InferOutput<typeof KeptSurveySchema>;
export type WordedSurvey = v.InferOutput<typeof WordedSurveySchema>;

/** Who holds a node's lock: which berth, doing what, since when. */
export const LockHolderSchema = v.object({
  host: v.string(),
  pid: v.number(),
  act: v.string(),
  node: v.string(),
  since: v.string(),
});
export type LockHolder = v.InferOutput<typeof LockHolderSchema>;

/** How many previews a node keeps to say what changed when an act is refused. */
export const KEPT_PREVIEWS = 64;

/** A secret to keep: its module, its name, and its value with its origin. */
export interface KeptSecret {
  module: string;
  secret: string;
  entry: VaultEntry;
}

/** One node's secrets. Values never leave berth but to the node's own machine. */
export interface NodeVault {
  /** The key fingerprints on this node are made with; it never leaves the vault. */
  fingerprintKey(): Promise<Uint8Array>;
  get(module: string, secret: string): Promise<VaultEntry | undefined>;
  /**
   * Keeps secrets, each replacing what was kept under its module and name (the last of
   * one name wins): all in one write, so an act that mints ten secrets writes its node's
   * vault once.
   */
  put(...kept: readonly KeptSecret[]): Promise<void>;
  /**
   * Forgets kept values, in one write: only a value berth kept beside one in use (a key
   * rotating, once it is placed) is ever dropped; a name not kept is nothing to do.
   */
  drop(...names: readonly { module: string; secret: string }[]): Promise<void>;
  /** Every secret kept for the node, none of them opened: what a plan that reads no value needs. */
  kept(): Promise<{ module: string; secret: string }[]>;
  /**
   * Every secret kept for the node, opened (of `modules` alone, when named), so that hook
   * output can be cleared of their values.
   */
  all(
    modules?: ReadonlySet<string>,
  ): Promise<{ module: string; secret: string; value: Uint8Array }[]>;
  /**
   * Seals every kept value and the fingerprint key again, to the recipients of now, in
   * one write. A value the identity cannot open is kept as it was, and named.
   */
  reseal(): Promise<Resealed>;
}

/**
 * The state's certificate authority as kept: one a state (see commands/state-ca.ts). Its
 * certificate is public; its private key is sealed as every value of the vault.
 */
export interface KeptCa {
  /** The CA's certificate, PEM: read without an identity. */
  certificate: string;
  /** When it was made. */
  at: string;
  /** Its private key, PKCS #8 PEM, opened with berth's identity (a VaultError says why not). */
  key(): Promise<Uint8Array>;
}

/** A CA just made, to keep: its certificate, its key (sealed by the stores), and when. */
export interface NewCa {
  certificate: string;
  key: Uint8Array;
  at: string;
}

/** What a reseal did: how many values it sealed again, and those it could not open. */
export interface Resealed {
  resealed: number;
  unopened: string[];
}

/**
 * One node's records, opened for one act: the node's lock is held until `close`, so
 * what is read here is current, and acts on other nodes go on meanwhile. Each write is
 * durable when its promise resolves, so an act that stops half-way leaves exactly what
 * it did.
 */
export interface NodeStore {
  readonly node: string;
  record(): Promise<NodeRecord>;
  saveRecord(next: NodeRecord): Promise<void>;
  readonly vault: NodeVault;
  /** Keeps a preview by digest; the node keeps its latest `KEPT_PREVIEWS`. */
  keepPreview(preview: KeptPreview): Promise<void>;
  findPreview(digest: string): Promise<KeptPreview | undefined>;
  /** Keeps the node's newest survey in place of the one before, whole or not at all. */
  keepSurvey(survey: KeptSurvey): Promise<void>;
  /** Appends the act to the node's journal. */
  journal(entry: NewJournalEntry): Promise<void>;
  close(): Promise<void>;
}

/**
 * berth's own records: node records, vaults, kept previews, the journal and the
 * locks. Every backend (memory, a state directory, PostgreSQL) keeps this contract;
 * `tests/stores/contract.ts` is its specification.
 */
export interface Stores {
  /**
   * Makes sure the stores can be used (the state directory, or the database and its
   * schema), before any act: a StoreError says why not. Calling it again is cheap.
   */
  open(): Promise<void>;
  /**
   * Opens a node's records for an act, waiting at most 10 s for its lock; then fails
   * with a StoreError naming the holder. `node` has passed the name rule.
   */
  openNode(node: string, act: string): Promise<NodeStore>;
  /** Journals an act refused before a node could be opened: a bad name, or one not in the inventory. */
  journalUnplaced(entry: NewJournalEntry): Promise<void>;
  /** The nodes that have records. Read without a lock: every write is whole. */
  listNodes(): Promise<string[]>;
  /** A node's record as last written, read without its lock. */
  readNode(node: string): Promise<NodeRecord>;
  /**
   * The journal, every node's and the unplaced acts, oldest first: all of it, or what the
   * query asks. A line that is not an entry goes with its node's journal, at the time of
   * the entry before it.
   */
  readJournal(query?: JournalQuery): Promise<JournalLine[]>;
  /**
   * Each node's newest survey, of the nodes that have one (of `nodes` alone when given),
   * read without a lock: every write is whole.
   */
  readSurveys(nodes?: readonly string[]): Promise<KeptSurvey[]>;
  /** Who holds which node's lock now; of `nodes` alone when given, whatever the fleet's size. */
  lockHolders(nodes?: readonly string[]): Promise<LockHolder[]>;
  /** The state's CA, or undefined before its first need. Read without a lock: it is written whole. */
  readCa(): Promise<KeptCa | undefined>;
  /**
   * Keeps `made` as the state's CA unless the state has one, in one step: of two berths
   * that make one at once, the first kept is the state's, and both are answered it.
   */
  keepCa(made: NewCa): Promise<KeptCa>;
  /** Seals the CA's key again to the recipients of now (rekey); nothing to do without one. */
  resealCa(): Promise<Resealed>;
  close(): Promise<void>;
}

/** Why the stores could not be opened or used, in the user's words. */
export class StoreError extends Error {
  override name = 'StoreError';
}

/** A node's lock not had within the wait: a store failure with a code of its own. */
export class LockTimeout extends StoreError {
  override name = 'LockTimeout';
}

/** The code of a store failure: a lock not had in time, or the stores themselves. */
export function storesCode(error: unknown): 'lock_timeout' | 'stores_unavailable' {
  return error instanceof LockTimeout ? 'lock_timeout' : 'stores_unavailable';
}

/** Why the stores could not be opened or used, as a refusal: a 503, or exit 3. */
export function storesRefusal(error: unknown): RefusalOf<'stores'> {
  return error instanceof StoreError
    ? { kind: 'stores', code: storesCode(error), message: error.message }
    : {
        kind: 'stores',
        code: storesCode(error),
        message: (error as Error).message,
        unforeseen: true,
      };
}

/** The words both faces use when the stores cannot be opened: a 503, or exit 3. */
export function storesCannotOpen(error: unknown): string {
  const why =
    error instanceof StoreError ? error.message : `unexpected: ${(error as Error).message}`;
  return `the stores cannot be opened: ${why}`;
}

/** The words of a lock not had in time: the holder, its act, its node, since when. */
export function lockNotHad(holder: LockHolder | undefined, node: string, waitMs: number): string {
  // `--lock-timeout 500ms` is said as given, not rounded to a second it never waited.
  const within = waitMs % 1000 === 0 ? `${waitMs / 1000}s` : `${waitMs}ms`;
  if (!holder)
    return `another berth holds the lock of node ${node} and did not let go within ${within}`;
  return `berth process ${holder.pid} on ${holder.host} holds the lock of node ${node} (${holder.act}, since ${holder.since}) and did not let go within ${within}`;
}

/**
 * The longest a journaled name or text is kept. A refused request can name a node
 * with 60,000 characters; the journal keeps enough to see what was asked.
 */
const JOURNAL_TEXT_LIMIT = 2_000;

function clip(text: string): string {
  return text.length > JOURNAL_TEXT_LIMIT
    ? `${text.slice(0, JOURNAL_TEXT_LIMIT)}… (${text.length} characters)`
    : text;
}

/**
 * The longest a text inside a journaled refusal is kept: it quotes what it was given (its
 * words show 80 characters of that) or what another program said, and a refusal may hold
 * several beside the entry's node, target and module.
 */
const REFUSAL_TEXT_LIMIT = 500;

/** Every text of a refusal cut to a length worth keeping: it may quote 60 KB it was given. */
function clippedTexts<T>(value: T): T {
  if (typeof value === 'string')
    return (
      value.length > REFUSAL_TEXT_LIMIT
        ? `${value.slice(0, REFUSAL_TEXT_LIMIT)}… (${value.length} characters)`
        : value
    ) as T;
  if (Array.isArray(value)) return value.map(clippedTexts) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, clippedTexts(inner)]),
    ) as T;
  return value;
}

/**
 * The entry as every store keeps it: of this version, names and a refusal's texts cut to a
 * length worth keeping.
 */
export function clippedEntry(entry: NewJournalEntry): TypedEntry {
  return {
    entry_version: JOURNAL_ENTRY_VERSION,
    ...entry,
    node: clip(entry.node),
    target: entry.target === undefined ? undefined : clip(entry.target),
    module: entry.module === undefined ? undefined : clip(entry.module),
    ...(entry.refusal === undefined ? {} : { refusal: clippedTexts(entry.refusal) }),
  };
}

/**
 * What a store indexes a journal line by, for a query: when (a line that is not an entry,
 * the time of the entry before it in its journal, `before`), and what it is about (an
 * entry's node and target; a line that is not one, its journal's node).
 */
export function journalKeys(
  line: JournalLine,
  journal: string | null,
  before: string,
): { at: string; about: string[] } {
  if (!('entry' in line)) return { at: before, about: journal === null ? [] : [journal] };
  const { at, node, target } = line.entry;
  return { at, about: target === undefined || target === node ? [node] : [node, target] };
}

/** Whether a line, by its keys, is one the query asks for (its tail aside). */
export function journalAsked(keys: { at: string; about: readonly string[] }, query: JournalQuery) {
  if (query.since !== undefined && keys.at < query.since) return false;
  return query.about === undefined || keys.about.some((name) => query.about?.includes(name));
}

/** The lines a query asks for, of each journal in the order written: merged, then its tail. */
export function queriedJournals(
  journals: readonly { journal: string | null; lines: readonly JournalLine[] }[],
  query: JournalQuery = {},
): JournalLine[] {
  const asked = journals.map(({ journal, lines }) => {
    let before = '';
    return lines.filter((line) => {
      const keys = journalKeys(line, journal, before);
      before = keys.at;
      return journalAsked(keys, query);
    });
  });
  const merged = mergeJournals(asked);
  return query.tail === undefined ? merged : merged.slice(Math.max(0, merged.length - query.tail));
}

/**
 * Merges journals, each already in the order it was written, into one, oldest first.
 * A line that is not an entry keeps its place in its own journal: it goes with the
 * entry before it.
 */
export function mergeJournals(journals: readonly JournalLine[][]): JournalLine[] {
  const keyed = journals.flatMap((lines) => {
    let at = '';
    return lines.map((line) => {
      if ('entry' in line) at = line.entry.at;
      return { line, at };
    });
  });
  return keyed
    .map((item, index) => ({ ...item, index }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.index - b.index))
    .map(({ line }) => line);
}

/** A journal line's text as an entry, or why it is not one. */
export function parseJournalLine(text: string, where: string): JournalLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { notAnEntry: text, where };
  }
  const result = v.safeParse(JournalEntrySchema, parsed);
  return result.success ? { entry: result.output } : { notAnEntry: text, where };
}
