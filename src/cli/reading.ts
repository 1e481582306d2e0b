import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describeAge } from '../duration.ts';
import { oneLine } from '../one-line.ts';
import { doesNotResolve, resolveModule } from '../resolve.ts';
import { checkNodeIn } from '../settings.ts';
import { assignedTo, managedOn } from '../state.ts';
import { fileCatalog } from '../stores/file-catalog.ts';
import { readFileStores } from '../stores/file-store.ts';
import type { StateLocation } from '../stores/state-dir.ts';
import { type JournalEntry, storesCannotOpen } from '../stores/stores.ts';
import { EXIT, type Io } from './io.ts';

/** `berth status [node]`: each node's assignments, managed modules and account. */
export async function showStatus(
  node: string | undefined,
  location: StateLocation,
  json: boolean,
  io: Io,
) {
  let read: Awaited<ReturnType<typeof readFileStores>>;
  try {
    read = await readFileStores(location);
  } catch (error) {
    io.err(storesCannotOpen(error));
    return EXIT.stores;
  }
  const { settings, state } = read;
  if (node !== undefined) {
    const refusal = checkNodeIn(settings, node);
    if (refusal) {
      io.err(refusal);
      return EXIT.refused;
    }
  }
  const catalog = fileCatalog(resolve(read.dir, settings.catalog));
  const nodes = node === undefined ? Object.keys(settings.nodes).sort() : [node];
  const report = [];
  for (const name of nodes) {
    const assigned = assignedTo(state, name);
    const unresolved: Record<string, string> = {};
    for (const module of assigned) {
      const resolution = await resolveModule(module, name, new Set(assigned), catalog);
      if (!resolution.ok) unresolved[module] = doesNotResolve(module, resolution.problem);
    }
    report.push({
      node: name,
      machine: settings.nodes[name],
      assigned,
      managed: managedOn(state, name),
      account: state.accounts[name] ? { takenAt: state.accounts[name].takenAt } : null,
      unresolved,
    });
  }
  if (json) {
    io.out(JSON.stringify({ nodes: report }));
    return EXIT.done;
  }
  const lines: string[] = [];
  for (const item of report) {
    const where =
      item.machine && 'root' in item.machine
        ? `root ${item.machine.root}`
        : `ssh ${item.machine?.ssh}`;
    lines.push(`${item.node} (${where})`);
    lines.push(`  to run: ${item.assigned.length ? item.assigned.join(', ') : 'nothing'}`);
    const managed = Object.entries(item.managed).map(
      ([module, record]) =>
        `${module} (by ${record.via}, since ${record.since}${record.started ? '' : ', not yet started'})`,
    );
    lines.push(`  managed: ${managed.length ? managed.join(', ') : 'nothing'}`);
    const takenAt = item.account?.takenAt;
    lines.push(
      takenAt
        ? `  account: taken ${takenAt} (${describeAge(Date.now() - Date.parse(takenAt))} ago)`
        : '  account: none yet (berth adopt to take one)',
    );
    for (const problem of Object.values(item.unresolved)) lines.push(`  ${problem}`);
  }
  io.out(lines.join('\n'));
  return EXIT.done;
}

/** `berth log`: the journal, oldest first. */
export async function showLog(location: StateLocation, json: boolean, io: Io) {
  let journalPath: string;
  try {
    journalPath = (await readFileStores(location)).journalPath;
  } catch (error) {
    io.err(storesCannotOpen(error));
    return EXIT.stores;
  }
  const text = await readFile(journalPath, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((line) => line.length > 0);
  if (json) {
    if (lines.length > 0) io.out(lines.join('\n'));
    return EXIT.done;
  }
  if (lines.length === 0) {
    io.out('the journal is empty: no act yet');
    return EXIT.done;
  }
  const shown = lines.map((line, index) => {
    const entry = journalEntry(line);
    if (!entry) {
      // Only a hand edit makes such a line (berth appends whole lines); show it, do not stop.
      return `line ${index + 1} of ${journalPath} is not a journal entry: ${JSON.stringify(line.slice(0, 120))}`;
    }
    const what = [entry.act, entry.node, entry.module].filter(Boolean).join(' ');
    const outcome = entry.outcome === 'done' ? 'done' : `refused: ${entry.error}`;
    return oneLine(`${entry.at} ${entry.actor} (${entry.via}) ${what}: ${outcome}`);
  });
  io.out(shown.join('\n'));
  return EXIT.done;
}

/** One journal line as an entry, or undefined when it is not one (`null`, `42`, `[]`, not JSON). */
function journalEntry(line: string): JournalEntry | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const entry = parsed as Partial<JournalEntry>;
  return typeof entry.act === 'string' && typeof entry.node === 'string'
    ? (entry as JournalEntry)
    : undefined;
}
