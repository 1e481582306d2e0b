import * as v from 'valibot';
import type { Asked, RefusalOf } from '../model/refusal.ts';
import { describePackageChanges } from '../packages/packages-basis.ts';
import type { KeptPreview, NodeStore } from '../stores/stores.ts';
import { canonicalJson, digestOf } from '../utils/digest.ts';
import { ownValue } from '../utils/own-record.ts';
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

/** A preview's command as an operator types it after `berth`: `converge box --filter gitea`. */
export function scopeWords(node: string, scope: unknown): string {
  const parsed = v.safeParse(ScopeSchema, scope);
  if (!parsed.success) return `${node} (a preview of an earlier berth)`;
  const { output } = parsed;
  if (output.command === 'take') return `take ${node} ${output.module}`;
  return output.filter === undefined
    ? `converge ${node}`
    : `converge ${node} --filter ${output.filter}`;
}

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
  const changes = kept ? describeChanges(kept.basis as Basis, basis) : [];
  return { kind: 'digest-stale', code: 'digest_stale', given, changes };
}

/** Says, in the operator's words, what differs between two bases. */
export function describeChanges(before: Basis, after: Basis): string[] {
  const node = after.node;
  if (before.node !== after.node || canonicalJson(before.scope) !== canonicalJson(after.scope)) {
    const then = scopeWords(before.node, before.scope);
    return [
      `that digest is of a preview of berth ${then}, not of berth ${scopeWords(node, after.scope)}`,
    ];
  }
  const said = new Set<string>();
  const was = new Set(before.assigned);
  const is = new Set(after.assigned);
  for (const module of is) if (!was.has(module)) said.add(`${node} is now to run ${module}`);
  for (const module of was) if (!is.has(module)) said.add(`${node} is no longer to run ${module}`);

  for (const [module] of changedKeys(before.managed, after.managed)) {
    const now = ownValue(after.managed, module);
    const then = ownValue(before.managed, module);
    if (now && !then) said.add(`berth now manages ${module} on ${node}`);
    else if (!now && then) said.add(`berth no longer manages ${module} on ${node}`);
    else said.add(`the record of ${module} on ${node} changed`);
  }
  // A module that entered or left the preview is said by its assignment or record
  // above; its definition, holdings and files are news only when both previews had them.
  const inBoth = ([, then, now]: [string, unknown, unknown]) =>
    then !== undefined && now !== undefined;
  for (const [module] of changedKeys(before.definitions, after.definitions).filter(inBoth)) {
    said.add(`the definition of ${module} changed`);
  }
  for (const [module, then, now] of changedKeys(before.survey, after.survey).filter(inBoth)) {
    for (const change of describeHoldingsChange(module, node, then, now)) said.add(change);
  }
  for (const [module, then, now] of changedKeys(before.held ?? {}, after.held ?? {}).filter(
    inBoth,
  )) {
    for (const change of describeHoldingsChange(module, node, then, now)) said.add(change);
  }
  const desired = changedKeys(before.desired ?? {}, after.desired ?? {}).filter(inBoth);
  for (const [module, then, now] of desired) {
    for (const [path] of changedKeys(asRecord(then), asRecord(now))) {
      said.add(`what berth writes to ${path} for ${module} changed`);
    }
  }
  const values = changedKeys(before.values ?? {}, after.values ?? {}).filter(inBoth);
  for (const [module, then, now] of values)
    for (const [name, was, is] of changedKeys(asRecord(then), asRecord(now)))
      said.add(`value ${name} of ${module} is now ${shownValue(is)}, was ${shownValue(was)}`);
  for (const [name, was, is] of changedKeys(before.facts ?? {}, after.facts ?? {}))
    if (before.facts !== undefined && after.facts !== undefined)
      said.add(`fact ${name} of ${node} is now ${shownValue(is)}, was ${shownValue(was)}`);
  if (canonicalJson(before.packages ?? null) !== canonicalJson(after.packages ?? null))
    for (const change of describePackageChanges(node, before.packages, after.packages))
      said.add(change);
  for (const [id, was, is] of changedKeys(before.rotating ?? {}, after.rotating ?? {})) {
    const [module, secret] = id.split('/');
    if (was === undefined) said.add(`the preview did not rotate ${secret} of ${module}`);
    else if (is === undefined) said.add(`${secret} of ${module} is no longer asked to rotate`);
    else
      said.add(
        `the key rotating for ${secret} of ${module} is ${is === '' ? 'gone' : `kid ${String(is)}`}, not kid ${String(was)}, which that preview named`,
      );
  }
  // A check is news by its exit alone: a preview kept by an earlier berth also kept its words.
  for (const [module, , code] of changedKeys(codes(before.checks), codes(after.checks))) {
    said.add(
      code === undefined
        ? `the check of ${module} is no longer run`
        : code === 0
          ? `the check of ${module} now passes`
          : `the check of ${module} now fails (exit ${code})`,
    );
  }
  return [...said];
}

type Holding = {
  data?: { path: string; found: boolean }[];
  secrets?: Record<string, unknown>;
  files?: Record<string, unknown>;
};

function describeHoldingsChange(
  module: string,
  node: string,
  then: unknown,
  now: unknown,
): string[] {
  const before = (then ?? {}) as Holding;
  const after = (now ?? {}) as Holding;
  const said: string[] = [];
  const wasFound = new Map((before.data ?? []).map((item) => [item.path, item.found]));
  for (const item of after.data ?? []) {
    if (wasFound.get(item.path) !== item.found) {
      said.push(
        `data ${item.path} of ${module} is ${item.found ? 'now found' : 'no longer found'} on ${node}`,
      );
    }
  }
  for (const [secret] of changedKeys(asRecord(before.secrets), asRecord(after.secrets))) {
    said.push(`secret ${secret} of ${module} changed on ${node}`);
  }
  for (const [path] of changedKeys(asRecord(before.files), asRecord(after.files))) {
    said.push(`file ${path} changed on ${node}`);
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

/** A value or fact of a kept basis, as words quote it: `"www.example.org"`, `8`, or none. */
function shownValue(value: unknown): string {
  return value === undefined ? 'not given' : JSON.stringify(value);
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
