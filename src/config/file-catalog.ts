import { statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Catalog, type CatalogEntry, parseDefinition, sourcesOf } from '../model/catalog.ts';
import { isName } from '../model/names.ts';
import { readCatalogFile } from './catalog-file.ts';

/** Definitions read before, by name, with the stamp of the file they were read from. */
export type DefinitionCache = Map<
  string,
  { stamp: string; entry: CatalogEntry; sources: string[] }
>;

/** What changes when a file is rewritten; a file not there has its own stamp. */
async function stampOf(path: string): Promise<string> {
  const info = await stat(path).catch(() => undefined);
  return info ? `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}` : 'none';
}

/**
 * The catalog as a directory of `<name>.json` files, for one act: each definition is
 * read once in the act, and across acts only again when its file changed.
 */
export function fileCatalog(dir: string, cache: DefinitionCache = new Map()): Catalog {
  const entries = new Map<string, Promise<CatalogEntry>>();
  return {
    async names() {
      const files = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      return files
        .filter((file) => file.endsWith('.json'))
        .map((file) => file.slice(0, -'.json'.length))
        .filter(isName)
        .sort();
    },
    entry(name) {
      let entry = entries.get(name);
      if (!entry) {
        entry = readEntry(dir, name, cache);
        entries.set(name, entry);
      }
      return entry;
    },
  };
}

async function readEntry(dir: string, name: string, cache: DefinitionCache): Promise<CatalogEntry> {
  if (!isName(name)) return { name, problem: `${JSON.stringify(name)} is not a module name` };
  const path = join(dir, `${name}.json`);
  try {
    // Once an act: made in place, as the stores' small calls are (see syncToDisk).
    const info = statSync(path);
    const own = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`;
    // A definition read before is good while neither it nor a template it reads changed.
    const kept = cache.get(name);
    if (kept) {
      const stamps = await Promise.all(kept.sources.map((source) => stampOf(join(dir, source))));
      if (kept.stamp === [own, ...stamps].join(' ')) return kept.entry;
    }
    const text = await readCatalogFile(dir, `${name}.json`);
    let sources: string[] = [];
    try {
      sources = sourcesOf(JSON.parse(text));
    } catch {
      // Not JSON: parseDefinition says so.
    }
    const stamps = await Promise.all(sources.map((source) => stampOf(join(dir, source))));
    const entry = await parseDefinition(name, path, text, (source) => readCatalogFile(dir, source));
    cache.set(name, { stamp: [own, ...stamps].join(' '), entry, sources });
    return entry;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { name, problem: `it is not in the catalog (no file ${path})`, missing: true };
    return { name, problem: `${path} cannot be read: ${(error as Error).message}` };
  }
}
