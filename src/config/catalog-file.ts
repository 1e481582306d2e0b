import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

/**
 * Reads a file of the catalog (a definition, or a file's `source` template) only from
 * under the catalog directory, by its real path: a symbolic link in the catalog that
 * leads out (a catalog change pointing at the controller's ssh keys or ~/.pgpass) would
 * otherwise copy that file onto nodes, or quote it in a refusal's words. The file
 * is opened first and its real path checked after, on what was opened (the same device
 * and inode), so a link swapped in between gains nothing. Throws with the reason in words.
 */
export async function readCatalogFile(catalogDir: string, name: string): Promise<string> {
  // The catalog directory itself may be a link: it is where the operator put it.
  const under = await realpath(catalogDir);
  // Non-blocking, so that a FIFO planted in the catalog is refused rather than waited on.
  const handle = await open(join(catalogDir, name), constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) throw new Error('it is not a regular file');
    const real = await realpath(join(catalogDir, name));
    if (!real.startsWith(under + sep))
      throw new Error(
        `its real path is outside the catalog directory ${under} (a symbolic link leads out); berth reads the catalog only from under its directory`,
      );
    const there = await stat(real);
    if (there.dev !== opened.dev || there.ino !== opened.ino)
      throw new Error('it was replaced while berth read it; try again');
    // Another name of the same file may stand anywhere: berth cannot say it is the catalog's.
    if (opened.nlink > 1)
      throw new Error(
        `it is a hard link (the file has ${opened.nlink} names), and berth cannot tell that the others are under the catalog`,
      );
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
