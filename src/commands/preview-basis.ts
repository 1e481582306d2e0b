import * as v from 'valibot';
import type { Asked } from '../model/asked.ts';
import type { Change } from '../model/change.ts';
import type { RefusalOf } from '../model/refusal.ts';
import type { KeptPreview, NodeStore } from '../stores/stores.ts';
import { canonicalJson, digestOf } from '../utils/digest.ts';
import { ownValue } from '../utils/own-record.ts';
import { packageChanges } from './package-changes.ts';
import type { CoveredCheck } from './steps/step.ts';

/**
 * What a preview was computed from, in one shape for take and converge, so that a
 * refused act can say what changed. Holds fingerprints, never a secret value.
 */
export interface Basis {
  node: string;
  /** The command previewed. */
  scope: Scope;
  assigned: string[];
  managed: Record<string, unknown>;
  /**
   * Each module's definition by its digest (`definitionDigests`): all a refused act says
   * of it is that it changed, and a digest says so without a kept preview holding every
   * file's text again.
   */
  definitions: Record<string, string>;
  survey: Record<string, unknown>;
  desired?: Record<string, unknown>;
  /** What the machine holds now where the account is not read again (a take's files), by module. */
  held?: Record<string, unknown>;
  /** Each module's check as the digest covers it, by module: `{code}`. */
  checks?: Record<string, CoveredCheck>;
  /** The node's packages the modules name, and what installing each module's would do. */
  packages?: unknown;
  /** Each module's values as the plan read them, by module: a value is never a secret. */
  values?: Record<string, Record<string, unknown>>;
  /** The node's facts, when the plan read them (a template, or a hook's environment). */
  facts?: Record<string, unknown>;
  /** `--rotate`: the kid of the key each secret asked rotates to, by `module/secret` ('' for none). */
  rotating?: Record<string, string>;
}

/** What a preview covers: the command, and its module (take) or filter (converge). */
export const ScopeSchema = v.variant('command', [
  v.object({ command: v.literal('take'), module: v.string() }),
  v.object({ command: v.literal('converge'), filter: v.optional(v.string()) }),
]);
export type Scope = v.InferOutput<typeof ScopeSchema>;

/** A preview's command as it was asked, for the words of a refusal to name it. */
export function scopeOf(basis: Pick<Basis, 'node' | 'scope'>): Asked {
  const { node, scope } = basis;
  if (scope.command === 'take') return { command: 'take', node, module: scope.module };
  return scope.filter === undefined
    ? { command: 'converge', node }
    : { command: 'converge', node, filter: scope.filter };
}

const DIGEST = /^[0-9a-f]{64}$/;

/** Whether `given` is spelt as a digest: 64 lower-case hex characters. */
export function isDigest(given: string): boolean {
  return DIGEST.test(given);
}

/** Each definition (or why it has none) as a basis names it: by the digest of its canonical JSON. */
export async function definitionDigests(
  definitions: Record<string, unknown>,
): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  for (const [module, definition] of Object.entries(definitions))
    digests[module] = await digestOf(definition);
  return digests;
}

/**
 * A preview's digest, over what the act would do and its basis: the only thing an act
 * needs to name the preview.
 */
export function previewDigest(
  kind: KeptPreview['kind'],
  plan: unknown,
  basis: Basis,
): Promise<string> {
  return digestOf({ kind, plan, basis });
}

/** Keeps a preview by its digest, so that an act refused on it can say what changed since. */
export async function keepPreview(
  store: NodeStore,
  kind: KeptPreview['kind'],
  digest: string,
  basis: Basis,
  now: Date,
): Promise<void> {
  await store.keepPreview({ digest, kind, node: basis.node, at: now.toISOString(), basis });
}

/** The refusal for an act whose digest does not name the current preview. */
export async function checkDigest(
  store: NodeStore,
  given: string,
  current: string,
  basis: Basis,
): Promise<RefusalOf<'invalid-digest' | 'digest-stale'> | undefined> {
  if (given === current) return undefined;
  if (!isDigest(given)) return { kind: 'invalid-digest', code: 'invalid_digest', given };
  const kept = await store.findPreview(given);
  const changes = kept ? changesBetween(kept.basis as Basis, basis) : [];
  return { kind: 'digest-stale', code: 'digest_stale', given, node: basis.node, changes };
}

/** What differs between two bases of a node, each once, in the order they are told. */
export function changesBetween(before: Basis, after: Basis): Change[] {
  if (before.node !== after.node || canonicalJson(before.scope) !== canonicalJson(after.scope)) {
    const was = v.safeParse(ScopeSchema, before.scope);
    return [
      {
        kind: 'other-preview',
        was: was.success
          ? scopeOf({ node: before.node, scope: was.output })
          : { node: before.node, earlier: true },
        is: scopeOf(after),
      },
    ];
  }
  const said = new Map<string, Change>();
  const say = (change: Change) => said.set(canonicalJson(change), change);
  const was = new Set(before.assigned);
  const is = new Set(after.assigned);
  for (const module of is) if (!was.has(module)) say({ kind: 'assigned', module });
  for (const module of was) if (!is.has(module)) say({ kind: 'unassigned', module });

  for (const [module] of changedKeys(before.managed, after.managed)) {
    const now = ownValue(after.managed, module);
    const then = ownValue(before.managed, module);
    say({ kind: now && !then ? 'managed' : !now && then ? 'unmanaged' : 'record', module });
  }
  // A module that entered or left the preview is said by its assignment or record
  // above; its definition, holdings and files are news only when both previews had them.
  const inBoth = ([, then, now]: [string, unknown, unknown]) =>
    then !== undefined && now !== undefined;
  for (const [module] of changedKeys(before.definitions, after.definitions).filter(inBoth)) {
    say({ kind: 'definition', module });
  }
  for (const [module, then, now] of changedKeys(before.survey, after.survey).filter(inBoth)) {
    for (const change of holdingsChanges(module, then, now)) say(change);
  }
  for (const [module, then, now] of changedKeys(before.held ?? {}, after.held ?? {}).filter(
    inBoth,
  )) {
    for (const change of holdingsChanges(module, then, now)) say(change);
  }
  const desired = changedKeys(before.desired ?? {}, after.desired ?? {}).filter(inBoth);
  for (const [module, then, now] of desired) {
    for (const [path] of changedKeys(asRecord(then), asRecord(now))) {
      say({ kind: 'written', module, path });
    }
  }
  const values = changedKeys(before.values ?? {}, after.values ?? {}).filter(inBoth);
  for (const [module, then, now] of values)
    for (const [name, was, is] of changedKeys(asRecord(then), asRecord(now)))
      say({ kind: 'value', module, name, was, is });
  for (const [name, was, is] of changedKeys(before.facts ?? {}, after.facts ?? {}))
    if (before.facts !== undefined && after.facts !== undefined)
      say({ kind: 'fact', name, was, is });
  if (canonicalJson(before.packages ?? null) !== canonicalJson(after.packages ?? null))
    for (const change of packageChanges(before.packages, after.packages)) say(change);
  for (const [id, was, is] of changedKeys(before.rotating ?? {}, after.rotating ?? {})) {
    const [module = '', secret = ''] = id.split('/');
    if (was === undefined) say({ kind: 'rotation-added', module, secret });
    else if (is === undefined) say({ kind: 'rotation-dropped', module, secret });
    else
      say({
        kind: 'rotation-key',
        module,
        secret,
        was: String(was),
        ...(is === '' ? {} : { is: String(is) }),
      });
  }
  // A check is news by its exit alone: a preview kept by an earlier berth also kept its words.
  for (const [module, , code] of changedKeys(codes(before.checks), codes(after.checks))) {
    say(
      code === undefined
        ? { kind: 'check-dropped', module }
        : { kind: 'check', module, code: code as number },
    );
  }
  return [...said.values()];
}

type Holding = {
  data?: { path: string; found: boolean }[];
  secrets?: Record<string, unknown>;
  files?: Record<string, unknown>;
};

function holdingsChanges(module: string, then: unknown, now: unknown): Change[] {
  const before = (then ?? {}) as Holding;
  const after = (now ?? {}) as Holding;
  const said: Change[] = [];
  const wasFound = new Map((before.data ?? []).map((item) => [item.path, item.found]));
  for (const item of after.data ?? []) {
    if (wasFound.get(item.path) !== item.found) {
      said.push({ kind: 'data', module, path: item.path, found: item.found });
    }
  }
  for (const [secret] of changedKeys(asRecord(before.secrets), asRecord(after.secrets))) {
    said.push({ kind: 'secret', module, secret });
  }
  for (const [path] of changedKeys(asRecord(before.files), asRecord(after.files))) {
    said.push({ kind: 'file', path });
  }
  return said;
}

function changedKeys(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): [string, unknown, unknown][] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .map((key): [string, unknown, unknown] => [key, ownValue(before, key), ownValue(after, key)])
    .filter(([, then, now]) => canonicalJson(then) !== canonicalJson(now));
}

/** Each check's exit by module; a kept basis is read back unchecked, so each is looked at. */
function codes(checks: Record<string, CoveredCheck> | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(asRecord(checks)).map(([module, check]) => [module, asRecord(check).code]),
  );
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
