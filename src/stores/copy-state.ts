import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StateLocation } from '../config/state-dir.ts';
import { NodeRecordSchema } from '../model/state.ts';
import { processSeal } from '../vault/process-seal.ts';
import type { Seal } from '../vault/seal.ts';
import { FILES, fileStores, readCaFile, readSurveyFile } from './file-store.ts';
import { readVaultFile, sealVaultFile } from './file-vault.ts';
import { readJson, storeErrorOf } from './json-file.ts';
import { importIntoPostgres, type NodeRecords, type StateRecords } from './postgres-import.ts';
import { keptPreviewsIn } from './preview-files.ts';
import { parseJournalLine } from './stores.ts';

/** What `berth copy-state` did: copied (its words), or refused (why). */
export type CopyOutcome = { done: string } | { refused: string };

/**
 * `berth copy-state --to URL`: copies a state directory's records (each node's record,
 * vault, previews and survey, the state's CA, and the whole journal) into the empty PostgreSQL store at `url`,
 * so a team moves without losing its history. A store that is not empty is refused;
 * the copy is one transaction, so one that fails leaves the store empty. The state
 * directory is left as it was, but for the node locks taken while reading and the
 * upgrade of an earlier berth's layout.
 * Fails with a StoreError in words when either side cannot be opened.
 */
export async function copyStateTo(
  location: StateLocation,
  url: string,
  seal: Seal = processSeal(),
): Promise<CopyOutcome> {
  const records = await readStateRecords(location, seal);
  const outcome = await importIntoPostgres(url, records, { seal });
  if ('refused' in outcome) return outcome;
  const { nodes, journal } = records;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const sum = (of: (item: NodeRecords) => number) =>
    nodes.reduce((total, item) => total + of(item), 0);
  const what = [
    count(
      sum((item) => (item.record ? 1 : 0)),
      'record',
    ),
    count(
      sum((item) => item.secrets.length),
      'secret',
    ),
    count(
      sum((item) => item.previews.length),
      'preview',
    ),
    count(
      sum((item) => (item.survey ? 1 : 0)),
      'survey',
    ),
    ...(records.ca ? ["the state's CA"] : []),
  ].join(', ');
  return {
    done: `copied ${count(nodes.length, 'node')} (${what}) and ${count(journal.length, 'journal line')} from ${location.dir} to PostgreSQL at ${outcome.imported.where}`,
  };
}

/**
 * Reads every record of a state directory. Each node is read holding its lock, so an
 * act running meanwhile is copied whole or not at all. Sealed values are copied as they
 * are, never opened: copying needs no identity.
 */
export async function readStateRecords(
  location: StateLocation,
  seal: Seal = processSeal(),
): Promise<StateRecords> {
  // Opening checks the directory, and upgrades (and seals) an earlier berth's layout.
  const stores = fileStores(location, { seal });
  await stores.open();
  const dir = location.dir;
  const nodes: NodeRecords[] = [];
  const journals: { node: string | null; lines: string[] }[] = [
    { node: null, lines: await journalLines(join(dir, FILES.journal)) },
  ];
  for (const node of await stores.listNodes()) {
    const here = join(dir, FILES.nodes, node);
    const opened = await stores.openNode(node, 'copy-state');
    try {
      const record = await readJson(join(here, FILES.record), NodeRecordSchema, () => undefined);
      const found = await readVaultFile(join(here, FILES.vault));
      // A vault an earlier berth put here since the state was sealed is sealed on the way.
      const vault = found && (await sealVaultFile(found, seal, async () => false));
      const previews = await keptPreviewsIn(join(here, FILES.previews));
      nodes.push({
        node,
        record,
        fingerprintKey: vault && Buffer.from(vault.key),
        secrets: Object.entries(vault?.secrets ?? {}).map(([key, kept]) => {
          const [module = '', secret = ''] = key.split('/');
          return {
            module,
            secret,
            value: Buffer.from(kept.value),
            origin: kept.origin,
            at: kept.at,
          };
        }),
        // A digest kept twice (a hand edit) is kept once, where it was last.
        previews: previews.filter(
          (preview, index) =>
            !previews.slice(index + 1).some((later) => later.digest === preview.digest),
        ),
        survey: await readSurveyFile(join(here, FILES.survey)),
      });
      journals.push({ node, lines: await journalLines(join(here, FILES.journal)) });
    } finally {
      await opened.close();
    }
  }
  const ca = await readCaFile(join(dir, FILES.ca));
  await stores.close();
  return { nodes, ca, journal: mergeByTime(journals) };
}

/**
 * A journal file's lines. A last line without its newline was cut by a crash mid-append
 * and never acknowledged: it is not copied, as the next append would have dropped it.
 * A line that is not an entry (a hand edit) is copied as it is; PostgreSQL's text holds
 * no NUL, so one is copied as U+FFFD.
 */
async function journalLines(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw storeErrorOf(error, `${path} cannot be read`);
  });
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a cut line
  return lines.filter((line) => line.length > 0).map((line) => line.replaceAll('\0', '\uFFFD'));
}

/**
 * The journals as one, oldest first, each keeping its own order; a line that is not an
 * entry goes with the entry before it. The store gives them ids in this order.
 */
function mergeByTime(
  journals: { node: string | null; lines: string[] }[],
): { node: string | null; line: string }[] {
  const keyed = journals.flatMap(({ node, lines }) => {
    let at = '';
    return lines.map((line) => {
      const parsed = parseJournalLine(line, '');
      if ('entry' in parsed) at = parsed.entry.at;
      return { node, line, at };
    });
  });
  return keyed
    .map((item, index) => ({ ...item, index }))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.index - b.index))
    .map(({ node, line }) => ({ node, line }));
}
