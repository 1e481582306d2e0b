import type { Catalog } from '../catalog.ts';
import type { Settings } from '../settings.ts';
import type { State } from '../state.ts';

/** One act as the journal keeps it. Never holds a secret value. */
export interface JournalEntry {
  at: string;
  actor: string;
  via: 'cli' | 'api';
  act: string;
  node: string;
  module?: string;
  outcome: 'done' | 'refused';
  said: string;
  error?: string;
}

/** A secret value in the vault, with where it came from. */
export interface VaultEntry {
  value: Uint8Array;
  origin: string;
  at: string;
}

export interface Vault {
  /** The key that fingerprints are made with; it never leaves the vault. */
  fingerprintKey(): Promise<Uint8Array>;
  get(node: string, module: string, secret: string): VaultEntry | undefined;
  put(node: string, module: string, secret: string, entry: VaultEntry): Promise<void>;
  /** Every secret kept for one node, so that hook output can be cleared of their values. */
  onNode(node: string): { module: string; secret: string; value: Uint8Array }[];
}

/**
 * A preview kept by digest, so that a refused act can say what changed.
 * `basis` holds what the preview was computed from: fingerprints, never values.
 */
export interface KeptPreview {
  digest: string;
  kind: 'take' | 'converge';
  node: string;
  at: string;
  basis: unknown;
}

/**
 * The stores, opened for one act on one node. Opening takes that node's lock (the
 * file store takes one lock for the whole state directory), so everything read
 * here is current until `close`. Each write is durable when its promise resolves,
 * so an act that stops half-way leaves exactly what it did.
 */
export interface Stores {
  readonly settings: Settings;
  readonly catalog: Catalog;
  readonly vault: Vault;
  state(): State;
  saveState(next: State): Promise<void>;
  journal(entry: JournalEntry): Promise<void>;
  keepPreview(preview: KeptPreview): Promise<void>;
  findPreview(digest: string): KeptPreview | undefined;
  close(): Promise<void>;
}

/** Why the stores could not be opened, in the user's words. */
export class StoreError extends Error {
  override name = 'StoreError';
}

export type OpenStores = (purpose: { node: string }) => Promise<Stores>;

/** The words both faces use when the stores cannot be opened: a 503, or exit 3. */
export function storesCannotOpen(error: unknown): string {
  const why =
    error instanceof StoreError ? error.message : `unexpected: ${(error as Error).message}`;
  return `the stores cannot be opened: ${why}`;
}
