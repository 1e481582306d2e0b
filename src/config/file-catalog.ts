import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Catalog, type CatalogEntry, parseDefinition } from '../catalog.ts';
import { isName } from '../names.ts';

/** The catalog as a directory of `<name>.json` files, read on demand and kept for the act. */
export function fileCatalog(dir: string): Catalog {
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
        entry = readEntry(dir, name);
        entries.set(name, entry);
      }
      return entry;
    },
  };
}

async function readEntry(dir: string, name: string): Promise<CatalogEntry> {
  if (!isName(name)) return { name, problem: `${JSON.stringify(name)} is not a module name` };
  const path = join(dir, `${name}.json`);
  try {
    return parseDefinition(name, path, await readFile(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { name, problem: `it is not in the catalog (no file ${path})` };
    return { name, problem: `${path} cannot be read: ${(error as Error).message}` };
  }
}
