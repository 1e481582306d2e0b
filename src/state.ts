import * as v from 'valibot';

/** What a machine holds for one module: what `adopt` records and `converge` surveys. */
export const HoldingsSchema = v.object({
  data: v.array(v.object({ path: v.string(), found: v.boolean() })),
  secrets: v.record(
    v.string(),
    v.object({ path: v.string(), found: v.boolean(), fingerprint: v.optional(v.string()) }),
  ),
  files: v.record(
    v.string(),
    v.object({
      found: v.boolean(),
      fingerprint: v.optional(v.string()),
      mode: v.optional(v.string()),
    }),
  ),
});
export type Holdings = v.InferOutput<typeof HoldingsSchema>;

export const AccountSchema = v.object({
  takenAt: v.string(),
  modules: v.record(v.string(), HoldingsSchema),
  /** Catalog modules that could not be surveyed, with why. */
  problems: v.optional(v.record(v.string(), v.string()), {}),
});
export type Account = v.InferOutput<typeof AccountSchema>;

/** A module berth runs on a node. `started` is false until its start hook has run. */
export const ManagedSchema = v.object({
  since: v.string(),
  via: v.picklist(['take', 'converge']),
  started: v.boolean(),
});
export type Managed = v.InferOutput<typeof ManagedSchema>;

export const StateSchema = v.object({
  version: v.literal(1),
  assignments: v.record(v.string(), v.array(v.string())),
  managed: v.record(v.string(), v.record(v.string(), ManagedSchema)),
  accounts: v.record(v.string(), AccountSchema),
});
export type State = v.InferOutput<typeof StateSchema>;

export function emptyState(): State {
  return { version: 1, assignments: {}, managed: {}, accounts: {} };
}

export function holdsNothing(holdings: Holdings): boolean {
  return (
    holdings.data.every((item) => !item.found) &&
    Object.values(holdings.secrets).every((item) => !item.found) &&
    Object.values(holdings.files).every((item) => !item.found)
  );
}

export function assignedTo(state: State, node: string): string[] {
  return state.assignments[node] ?? [];
}

export function managedOn(state: State, node: string): Record<string, Managed> {
  return state.managed[node] ?? {};
}

/** A copy with one node's assignments replaced, sorted so files diff well. */
export function withAssignments(state: State, node: string, modules: string[]): State {
  const assignments = { ...state.assignments, [node]: [...new Set(modules)].sort() };
  if (assignments[node]?.length === 0) delete assignments[node];
  return { ...state, assignments };
}

export function withManaged(state: State, node: string, module: string, managed?: Managed): State {
  const onNode = { ...managedOn(state, node) };
  if (managed) onNode[module] = managed;
  else delete onNode[module];
  const all = { ...state.managed, [node]: onNode };
  if (Object.keys(onNode).length === 0) delete all[node];
  return { ...state, managed: all };
}
