import type { Catalog } from '../catalog.ts';
import type { ActDeps } from '../commands/act-shapes.ts';
import type { ChecksNow } from '../commands/check-now.ts';
import type { CheckOutcome } from '../commands/steps/step.ts';
import type { CommandShape } from '../commands/table.ts';
import { ConfigError } from '../config/config.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { declaredFor, runField, toRun } from '../declared.ts';
import { describeAge } from '../duration.ts';
import { isName } from '../names.ts';
import { catalogHint, doesNotResolve, loadEntries, moduleResolver } from '../resolve.ts';
import { enveloped } from '../result.ts';
import { checkNodeIn, type Settings } from '../settings.ts';
import type { Managed } from '../state.ts';
import { type LockHolder, storesCannotOpen } from '../stores/stores.ts';
import { resolveTarget } from '../targets.ts';
import { VaultError } from '../vault/seal.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io } from './io.ts';
import { DEFAULT_LOCK_TIMEOUT_MS, sayingWhenWaiting } from './lock-wait.ts';
import { toRunWords } from './to-run-words.ts';

/** `berth status [node]`: each node's assignments, managed modules, account, and lock. */
export async function showStatus(
  node: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
  check = false,
  lockWaitMs = DEFAULT_LOCK_TIMEOUT_MS,
) {
  const opened = stateDeps(location, io.env, { lockWaitMs });
  // A check runs under the node's lock: a wait for it is said, as an act's is.
  const deps = { ...opened, stores: sayingWhenWaiting(opened.stores, (line) => io.err(line)) };
  const { stores } = deps;
  try {
    await stores.open();
    // One node's status reads that node's entry; a target needs the whole inventory.
    const one = node !== undefined && isName(node);
    const { settings, catalog } = await deps.loadConfig(one ? [node] : undefined);
    if (check && node === undefined) {
      io.err('berth status --check runs checks on a target: berth status TARGET --check');
      return EXIT.refused;
    }
    const nodes = statusNodes(node, settings);
    if ('refused' in nodes) {
      io.err(nodes.refused);
      return EXIT.refused;
    }
    const holders = new Map<string, LockHolder>(
      // `status NODE` reads that node's lock alone: its cost does not grow with the fleet.
      (await stores.lockHolders(node === undefined ? undefined : nodes)).map((holder) => [
        holder.node,
        holder,
      ]),
    );
    // The checks run through the runner, each node under its lock, before anything is said.
    const checks = check ? await checksNow(nodes, deps) : undefined;
    if (checks && 'refused' in checks) {
      io.err(checks.refused);
      return checks.exit;
    }
    const report = [];
    for (const name of nodes)
      report.push(await nodeStatus(name, settings, catalog, deps, holders.get(name), checks));
    // berth.json naming a module the catalog has not is a mistake in the file a team
    // reviews, as `berth validate` finds it: said with its field, and exit 1.
    const misdeclared = report.some((item) => item.misdeclared);
    // A check that fails is news a script acts on: exit 1, whatever is printed.
    const failing = report.some((item) =>
      Object.values(item.checks ?? {}).some((outcome) => outcome !== null && outcome.code !== 0),
    );
    const exit = failing || misdeclared ? EXIT.refused : EXIT.done;
    if (json) {
      io.out(
        JSON.stringify(enveloped({ nodes: report.map(({ misdeclared: _, ...item }) => item) })),
      );
      return exit;
    }
    // A check's words come with the diff's, which a status without --check does not load.
    const words = check ? await import('../words/steps.ts') : undefined;
    io.out(report.flatMap((item) => statusLines(item, words?.describeCheck)).join('\n'));
    return exit;
  } catch (error) {
    return failed(error, io);
  } finally {
    await stores.close().catch(() => {});
  }
}

/** The nodes a status names: every node, one node, or a target's. */
function statusNodes(node: string | undefined, settings: Settings): string[] | { refused: string } {
  if (node === undefined) return Object.keys(settings.nodes).sort();
  if (isName(node)) {
    const refusal = checkNodeIn(settings, node);
    return refusal ? { refused: refusal } : [node];
  }
  const targeted = resolveTarget(node, {
    nodes: Object.keys(settings.nodes),
    groups: settings.groups,
  });
  return targeted.ok ? targeted.nodes : { refused: targeted.refused };
}

type NodeStatus = Awaited<ReturnType<typeof nodeStatus>>;

/** One node's part of the status: its record, what it is to run, and what does not resolve. */
async function nodeStatus(
  name: string,
  settings: Settings,
  catalog: Catalog,
  deps: Pick<ActDeps, 'stores'>,
  lock: LockHolder | undefined,
  checks: Map<string, ChecksNow> | undefined,
) {
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
    misdeclared,
  };
}

/** A node's status as the command line prints it. */
function statusLines(
  item: NodeStatus,
  describeCheck: ((check: CheckOutcome) => string) | undefined,
): string[] {
  const lines: string[] = [];
  const where =
    item.machine && 'root' in item.machine
      ? `root ${item.machine.root}`
      : `ssh ${item.machine?.ssh}`;
  lines.push(`${item.node} (${where})`);
  lines.push(`  to run: ${toRunWords(item.assigned, item.declared)}`);
  const managed = Object.entries(item.managed).map(
    ([module, record]) =>
      `${module} (by ${record.via}, since ${record.since}${record.started ? '' : ', not yet started'}${owedWords(record)})`,
  );
  lines.push(`  managed: ${managed.length ? managed.join(', ') : 'nothing'}`);
  const takenAt = item.account?.takenAt;
  lines.push(
    takenAt
      ? `  account: taken ${takenAt} (${describeAge(Date.now() - Date.parse(takenAt))} ago)`
      : '  account: none yet (berth adopt to take one)',
  );
  if (item.lock)
    lines.push(
      `  locked: berth process ${item.lock.pid} on ${item.lock.host} is acting (${item.lock.act}, since ${item.lock.since})`,
    );
  if (item.unneededPackages)
    lines.push(
      `  packages berth installed that nothing it runs needs: ${item.unneededPackages.join(', ')} (still installed: remove them by hand if nothing else uses them)`,
    );
  if (item.startsHeldSince)
    lines.push(
      `  berth's policy-rc.d may still be on ${item.node}, left by an install it began ${item.startsHeldSince} and did not see end: while it stands no service starts or restarts there; berth converge ${item.node} looks, and removes it`,
    );
  for (const problem of Object.values(item.unresolved)) lines.push(`  ${problem}`);
  for (const [module, outcome] of Object.entries(item.checks ?? {}))
    lines.push(
      outcome === null
        ? `  check ${module}: none in its definition`
        : `  check ${module}: ${describeCheck?.(outcome)}`,
    );
  return lines;
}

/** A hook that failed and is owed until it succeeds, as status says it beside the module. */
function owedWords(managed: Managed): string {
  return managed.pending?.includes('reload') ? ', a reload is owed: the next converge runs it' : '';
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
): Promise<Map<string, ChecksNow> | { refused: string; exit: number }> {
  const { openAct } = await import('../commands/act.ts');
  const { checkNow } = await import('../commands/check-now.ts');
  const checks = new Map<string, ChecksNow>();
  const command: CommandShape = {
    name: 'status --check',
    needs: ['node'],
    summary: "Run each managed module's check",
    options: [],
    run: checkNow((node, seen) => checks.set(node, seen)),
    changesNothing: true,
  };
  const request = { node: nodes.join(','), module: '', yes: false };
  // Not journaled (it changes nothing): there is no one to name.
  const opened = await openAct(command, request, deps, { actor: '', via: 'cli', mint: [] });
  if (opened.kind !== 'ready') return { refused: opened.refused, exit: EXIT.stores };
  const outcome = await opened.run();
  if (outcome.error === undefined) return checks;
  return { refused: outcome.error, exit: outcome.storeFailed ? EXIT.stores : EXIT.refused };
}

function failed(error: unknown, io: Io): number {
  // status --check opens the vault (to clear a check's output of secrets): a value berth
  // cannot open is refused as every command refuses it.
  if (error instanceof ConfigError || error instanceof VaultError) {
    io.err(error.message);
    return EXIT.refused;
  }
  io.err(storesCannotOpen(error));
  return EXIT.stores;
}
