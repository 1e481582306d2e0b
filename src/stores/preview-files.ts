import { mkdirSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncDirectory } from '../fs/atomic-file.ts';
import { readJson, storeErrorOf } from './json-file.ts';
import { KEPT_PREVIEWS, type KeptPreview, KeptPreviewSchema, StoreError } from './stores.ts';

/** A kept preview's file: `<order>.<digest>.json`, order counting up as previews are kept. */
const KEPT_FILE = /^(\d{1,15})\.([0-9a-f]{64})\.json$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** Whether `name` is a kept preview's file: the temporary files of its writes are named after it. */
export const isPreviewFile = (name: string) => KEPT_FILE.test(name);

interface PreviewFile {
  order: number;
  digest: string;
  name: string;
}

/**
 * A node's kept previews in a state directory: a file each in `dir`. Keeping one writes
 * its file alone and removes those it puts past the node's latest `KEPT_PREVIEWS`, so what
 * a preview costs does not grow with how many were kept before it; finding one reads its
 * file alone. The order is in the names, so no index has to agree with the files: a write
 * cut short leaves at most a file more, removed by the next keep.
 */
export function previewFiles(
  dir: string,
  write: (name: string, data: string) => Promise<void>,
): {
  keep(preview: KeptPreview): Promise<void>;
  find(digest: string): Promise<KeptPreview | undefined>;
} {
  let listed: PreviewFile[] | undefined;
  let made = false;
  const list = async () => {
    listed ??= await listFiles(dir);
    return listed;
  };

  return {
    async keep(preview) {
      if (!DIGEST.test(preview.digest))
        throw new StoreError(
          `a preview is kept by the 64 hex characters of its digest, not ${JSON.stringify(preview.digest.slice(0, 80))}`,
        );
      const kept = await list();
      if (kept.length === 0 && !made) {
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
          await syncDirectory(dirname(dir));
        } catch (error) {
          throw storeErrorOf(error, `${dir} cannot be made`);
        }
        made = true;
      }
      const order = (kept[kept.length - 1]?.order ?? 0) + 1;
      const name = `${String(order).padStart(12, '0')}.${preview.digest}.json`;
      await write(name, JSON.stringify(preview));
      // The same digest kept again counts as new: its older file goes.
      const stay = kept
        .filter((item) => item.digest !== preview.digest)
        .slice(-(KEPT_PREVIEWS - 1));
      for (const item of kept) {
        if (stay.includes(item)) continue;
        await unlink(join(dir, item.name)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw storeErrorOf(error, `${dir} cannot be written`);
        });
      }
      listed = [...stay, { order, digest: preview.digest, name }];
    },
    async find(digest) {
      if (!DIGEST.test(digest)) return undefined;
      const kept = await list();
      for (let at = kept.length - 1; at >= 0; at--) {
        const file = kept[at] as PreviewFile;
        if (file.digest === digest) return readFile(dir, file);
      }
      return undefined;
    },
  };
}

/** Every preview kept in `dir`, oldest first. */
export async function keptPreviewsIn(dir: string): Promise<KeptPreview[]> {
  const previews: KeptPreview[] = [];
  for (const file of await listFiles(dir)) {
    const preview = await readFile(dir, file);
    if (preview) previews.push(preview);
  }
  return previews;
}

function readFile(dir: string, file: PreviewFile): Promise<KeptPreview | undefined> {
  return readJson(join(dir, file.name), KeptPreviewSchema, () => undefined);
}

/** The files of the previews kept in `dir`, oldest first; none when it is not there. */
async function listFiles(dir: string): Promise<PreviewFile[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw storeErrorOf(error, `${dir} cannot be read`);
  });
  const files: PreviewFile[] = [];
  for (const name of names) {
    const match = KEPT_FILE.exec(name);
    if (match) files.push({ order: Number(match[1]), digest: match[2] as string, name });
  }
  return files.sort((a, b) => a.order - b.order);
}
