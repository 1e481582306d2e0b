import * as v from 'valibot';
import type { Catalog } from '../model/catalog.ts';
import { isName } from '../model/names.ts';
import { catalogHint, doesNotResolve, loadEntries, moduleResolver } from '../model/resolve.ts';
import { FORMAT_VERSION } from '../model/result.ts';
import type { Settings } from '../model/settings.ts';
import { ManagedSchema } from '../model/state.ts';
import { resolveTarget } from '../model/targets.ts';
import { type LockHolder, LockHolderSchema } from '../stores/stores.ts';
import { closest } from '../utils/did-you-mean.ts';
import type { ActDeps } from './act-shapes.ts';
import type { ChecksNow } from './check-now.ts';
import type { AnswerFunction, CommandShape } from './command-shape.ts';
import { declaredFor, runField, toRun } from './declared.ts';
import { type RefusedReading, RefusedSchema, refused, refusedFor } from './reading-answer.ts';

/** A node of berth.json: a directory of this machine, or an ssh destination. */
const MachineSchema = v.union([
  v.object({ root: v.string() }),
  v.object({ ssh: v.string(), port: v.optional(v.number()), sudo: v.optional(v.boolean()) }),
]);

const CheckOutcomeSchema = v.object({
  code: v.number(),
  last: v.string(),
  timedOut: v.optional(v.number()),
});

/** One node's status: its record, what it is to run, and what does not resolve. */
export const NodeStatusSchema = v.object({
  node: v.string(),
  machine: v.optional(MachineSchema),
  assigned: v.array(v.string()),
  declared: v.array(v.object({ module: v.string(), from: v.array(v.string()) })),
  managed: v.record(v.string(), ManagedSchema),
  account: v.nullable(v.object({ takenAt: v.string() })),
  /** Each module it is to run that does not resolve, with why, in words. */
  unresolved: v.record(v.string(), v.string()),
  lock: v.nullable(LockHolderSchema),
  unneededPackages: v.optional(v.array(v.string())),
  /**
   * When berth began an install that held service starts and did not see it end: its
   * policy-rc.d may still be on the node.
   */
  startsHeldSince: v.optional(v.string()),
  /** With `--check`: each managed module's check, or null for one without. */
  checks: v.optional(v.record(v.string(), v.nullable(CheckOutcomeSchema))),
});
export type NodeStatus = v.InferOutput<typeof NodeStatusSchema>;

/**
 * `berth status [target] [--check]`: each node's status. `code` says why it exits 1 though
 * it was read: a check that fails (`check_failed`), or berth.json naming a module the
 * catalog has not (`invalid_config`, as `berth validate` finds it).
 */
export const StatusAnswerSchema = v.union([
  RefusedSchema,
  v.object({
    format_version: v.literal(FORMAT_VERSION),
    code: v.optional(v.picklist(['check_failed', 'invalid_config'])),
    nodes: v.array(NodeStatusSchema),
  }),
]);
export type StatusAnswer = v.InferOutput<typeof StatusAnswerSchema>;

/** `berth status [node]`: each node's assignments, managed modules, account, and lock. */
export const status: AnswerFunction<StatusAnswer> = async ({ words, options }, deps) => {
  const [node] = words;
  const { stores } = deps;
  try {
    await stores.open();
    // One node's status reads that node's entry; a target needs the whole inventory.
    const one = node !== undefined && isName(node);
    const { settings, catalog } = await deps.loadConfig(one ? [node] : undefined);
    if (options.check && node === undefined)
      return refused({ kind: 'check-needs-target', code: 'invalid_target' });
    const nodes = statusNodes(node, settings);
    if ('refusal' in nodes) return nodes;
    const holders = new Map<string, LockHolder>(
      // `status NODE` reads that node's lock alone: its cost does not grow with the fleet.
      (await stores.lockHolders(node === undefined ? undefined : nodes)).map((holder) => [
        holder.node,
        holder,
      ]),
    );
    // The checks run through the runner, each node under its lock, before anything is said.
    const checks = options.check ? await checksNow(nodes, deps) : undefined;
    if (checks && 'refusal' in checks) return checks;
    const report: NodeStatus[] = [];
    let misdeclared = false;
    for (const name of nodes) {
      const item = await nodeStatus(name, settings, catalog, deps, holders.get(name), checks);
      misdeclared ||= item.misdeclared;
      report.push(item.status);
    }
    // A check that fails is news a script acts on: exit 1, whatever is printed.
    const failing = report.some((item) =>
      Object.values(item.checks ?? {}).some((outcome) => outcome !== null && outcome.code !== 0),
    );
    const code = failing ? 'check_failed' : misdeclared ? 'invalid_config' : undefined;
    return { format_version: FORMAT_VERSION, ...(code && { code }), nodes: report };
  } catch (error) {
    return refusedFor(error);
  } finally {
    await stores.close().catch(() => {});
  }
};

/** The nodes a status names: every node, one node, or a target's. */
function statusNodes(node: string | undefined, settings: Settings): string[] | RefusedReading {
  if (node === undefined) return Object.keys(settings.nodes).sort();
  if (isName(node)) {
    // Own names only: `constructor` is in every object, and is no node of the inventory.
    if (Object.hasOwn(settings.nodes, node)) return [node];
    const meant = closest(node, Object.keys(settings.nodes));
    return refused({
      kind: 'unknown-node',
      code: 'unknown_node',
      node,
      ...(meant === undefined ? {} : { meant }),
    });
  }
  const targeted = resolveTarget(node, {
    nodes: Object.keys(settings.nodes),
    groups: settings.groups,
  });
  return targeted.ok ? targeted.nodes : refused(targeted.refusal);
}

/** One node's part of the status, and whether berth.json names a module the catalog has not. */
async function nodeStatus(
  name: string,
  settings: Settings,
  catalog: Catalog,
  deps: Pick<ActDeps, 'stores'>,
  lock: LockHolder | undefined,
  checks: Map<string, ChecksNow> | undefined,
): Promise<{ status: NodeStatus; misdeclared: boolean }> {
  const record = await deps.stores.readNode(name);
  const declared = declaredFor(settings, name);
  const running = toRun(record.assigned, declared);
  const entries = await loadEntries(catalog, [
    ...new Set([...running, ...Object.keys(record.managed)]),
  ]);
  const unresolved: Record<string, string> = {};
  let misdeclared = false;
  const resolve = moduleResolver(new Set(running), entries);
  for (const module of running) {
    const resolution = resolve(module);
    if (resolution.ok) continue;
    const hint = await catalogHint(resolution.unresolved, module, catalog);
    const words = `${doesNotResolve(module, name, resolution.unresolved)}${hint}`;
    const fields =
      resolution.unresolved.why === 'not-in-catalog'
        ? (declared
            .find((item) => item.module === module)
            ?.from.map((target) => runField(settings, target, module)) ?? [])
        : [];
    if (fields.length > 0) misdeclared = true;
    unresolved[module] = fields.length > 0 ? `berth.json ${fields.join(', ')}: ${words}` : words;
  }
  const unneeded = unneededPackages(record, running, entries);
  return {
    misdeclared,
    status: {
      node: name,
      machine: settings.nodes[name],
      assigned: record.assigned,
      declared,
      managed: record.managed,
      account: record.account ? { takenAt: record.account.takenAt } : null,
      unresolved,
      lock: lock ?? null,
      ...(unneeded.length > 0 ? { unneededPackages: unneeded } : {}),
      ...(record.startsHeldSince ? { startsHeldSince: record.startsHeldSince } : {}),
      ...(checks ? { checks: checks.get(name) ?? {} } : {}),
    },
  };
}

/**
 * The packages berth installed on a node that no module it manages or is to run names: a
 * release leaves them installed, so status says which they are. A module the node is to
 * run needs its packages even before berth manages it (an act cut short, say).
 */
function unneededPackages(
  record: { managed: Record<string, unknown>; packages?: string[] },
  running: readonly string[],
  entries: Awaited<ReturnType<typeof loadEntries>>,
): string[] {
  const needed = new Set<string>();
  for (const module of new Set([...Object.keys(record.managed), ...running])) {
    const entry = entries.get(module);
    if (entry && 'definition' in entry)
      for (const spec of entry.definition.packages)
        if (spec.state !== 'absent') needed.add(spec.name);
  }
  return (record.packages ?? []).filter((name) => !needed.has(name));
}

/**
 * The checks of every module berth manages on each node, run now through the runner (a
 * target of these nodes, each under its lock), or why they could not all be run.
 */
async function checksNow(
  nodes: readonly string[],
  deps: ActDeps,
): Promise<Map<string, ChecksNow> | RefusedReading> {
  const { openAct } = await import('./act.ts');
  const { checkNow } = await import('./check-now.ts');
  const checks = new Map<string, ChecksNow>();
  const command: CommandShape = {
    name: 'status --check',
    needs: ['node'],
    options: [],
    run: checkNow((node, seen) => checks.set(node, seen)),
    changesNothing: true,
  };
  const request = { node: nodes.join(','), module: '', yes: false };
  // Not journaled (it changes nothing): there is no one to name.
  const opened = await openAct(command, request, deps, { actor: '', via: 'cli', line: {} });
  if (opened.kind !== 'ready') return refused(opened.refusal);
  const { refusal } = await opened.run();
  return refusal === undefined ? checks : refused(refusal);
}
