import * as v from 'valibot';
import { ownRecord, ownValue } from '../utils/own-record.ts';

/**
 * A path berth would not follow: it, or a directory above it, is a link another user could
 * have placed. The words name the path, the link and its owner; nothing was read through it.
 */
const Link = v.optional(v.string());

/** What a machine holds for one module: what `adopt` records and `converge` surveys. */
export const HoldingsSchema = v.object({
  /** Data is found when it exists and is not empty; `empty` when it exists and is. */
  data: v.array(
    v.object({
      path: v.string(),
      found: v.boolean(),
      empty: v.optional(v.literal(true)),
      link: Link,
    }),
  ),
  secrets: ownRecord(
    v.string(),
    v.object({
      path: v.string(),
      found: v.boolean(),
      fingerprint: v.optional(v.string()),
      /** A `tls` secret's certificate file, when found: its fingerprint. */
      certificate: v.optional(v.string()),
      link: Link,
    }),
  ),
  files: ownRecord(
    v.string(),
    v.object({
      found: v.boolean(),
      fingerprint: v.optional(v.string()),
      mode: v.optional(v.string()),
      link: Link,
    }),
  ),
});
export type Holdings = v.InferOutput<typeof HoldingsSchema>;

export const AccountSchema = v.object({
  takenAt: v.string(),
  modules: ownRecord(v.string(), HoldingsSchema),
  /** Catalog modules that could not be surveyed, with why. */
  problems: v.optional(ownRecord(v.string(), v.string()), {}),
});
export type Account = v.InferOutput<typeof AccountSchema>;

/** A module berth runs on a node. `started` is false until its start hook has run. */
export const ManagedSchema = v.object({
  since: v.string(),
  via: v.picklist(['take', 'converge']),
  started: v.boolean(),
  /**
   * Hooks that failed, or were begun and cut, and are owed: the next converge runs them
   * until one succeeds (a setup owed, and then the reload or start after it).
   */
  pending: v.optional(v.array(v.picklist(['setup', 'reload']))),
  /**
   * A taken module's packages found installed when it was taken, by name: version. berth
   * did not install them, so status does not count them among its own.
   */
  packages: v.optional(ownRecord(v.string(), v.string())),
});
export type Managed = v.InferOutput<typeof ManagedSchema>;

/**
 * Everything berth keeps of one node but its secrets: what it is to run, what berth
 * runs there, and its latest account. An act reads and writes its own node's record.
 */
export const NodeRecordSchema = v.object({
  assigned: v.array(v.string()),
  managed: ownRecord(v.string(), ManagedSchema),
  account: v.optional(AccountSchema),
  /** The packages berth installed on the node, by name: release leaves them installed. */
  packages: v.optional(v.array(v.string())),
  /**
   * When berth began an install that held service starts (its policy-rc.d) and has not
   * seen it end: one killed half-way may have left the hold. A converge that finds none
   * there, or lifts it, forgets it.
   */
  startsHeldSince: v.optional(v.string()),
  /**
   * The kept values berth found in a file of the node (a take's or a converge's keep), by
   * module and secret: that file. Its owner could read the value before berth kept it.
   */
  found: v.optional(ownRecord(v.string(), ownRecord(v.string(), v.string()))),
});
export type NodeRecord = v.InferOutput<typeof NodeRecordSchema>;

export function emptyRecord(): NodeRecord {
  return { assigned: [], managed: {} };
}

/** Whether a record says nothing: such a node needs no record kept. */
export function isEmptyRecord(record: NodeRecord): boolean {
  return (
    record.assigned.length === 0 &&
    Object.keys(record.managed).length === 0 &&
    record.account === undefined &&
    !record.packages?.length &&
    record.startsHeldSince === undefined
  );
}

/** Whether the machine holds nothing of a module: no data, secret or file, and no link in their place. */
export function holdsNothing(holdings: Holdings): boolean {
  return (
    holdings.data.every((item) => !item.found && !item.link) &&
    Object.values(holdings.secrets).every((item) => !item.found && !item.link) &&
    Object.values(holdings.files).every((item) => !item.found && !item.link)
  );
}

/** The paths of a module berth will not follow, with their words, in the definition's order. */
export function linksIn(holdings: Holdings): { path: string; words: string }[] {
  const links: { path: string; words: string }[] = [];
  const seen = new Set<string>();
  const add = (path: string, words: string | undefined) => {
    if (words === undefined || seen.has(path)) return;
    seen.add(path);
    links.push({ path, words });
  };
  for (const item of holdings.data) add(item.path, item.link);
  for (const item of Object.values(holdings.secrets)) add(item.path, item.link);
  for (const [path, item] of Object.entries(holdings.files)) add(path, item.link);
  return links;
}

/** A copy with the assignments replaced, sorted so records diff well. */
export function withAssigned(record: NodeRecord, modules: readonly string[]): NodeRecord {
  return { ...record, assigned: [...new Set(modules)].sort() };
}

export function withManaged(record: NodeRecord, module: string, managed?: Managed): NodeRecord {
  const all = { ...record.managed };
  if (managed) all[module] = managed;
  else delete all[module];
  return { ...record, managed: all };
}

/** A copy that says where each of these kept values was found. */
export function withFound(
  record: NodeRecord,
  found: readonly { module: string; secret: string; path: string }[],
): NodeRecord {
  const all = { ...record.found };
  for (const { module, secret, path } of found)
    all[module] = { ...ownValue(all, module), [secret]: path };
  return { ...record, found: all };
}

/** A copy that names these packages among those berth installed, sorted, and not those it removed. */
export function withPackages(
  record: NodeRecord,
  names: readonly string[],
  removed: readonly string[] = [],
): NodeRecord {
  const gone = new Set(removed);
  const kept = [...new Set([...(record.packages ?? []), ...names])].filter(
    (name) => !gone.has(name),
  );
  return { ...record, packages: kept.sort() };
}

/** A copy that says berth began an install holding service starts at `since`, or, without it, not. */
export function withStartsHeld(record: NodeRecord, since: string | undefined): NodeRecord {
  const { startsHeldSince: _, ...rest } = record;
  return since === undefined ? rest : { ...rest, startsHeldSince: since };
}
