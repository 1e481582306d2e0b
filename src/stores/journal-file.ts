import { closeSync, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs';
import { syncToDisk, writeAll } from '../fs/atomic-file.ts';

/**
 * Appends one line and makes it durable before the act is acknowledged. With `mend`, a
 * cut last line is dropped first (see `mend`), through the same open file.
 */
export async function appendLine(path: string, line: string, { mend = false } = {}) {
  const fd = openSync(path, 'a+', 0o600);
  try {
    if (mend) mendOpen(fd);
    writeAll(fd, `${line}\n`);
    await syncToDisk(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A crash mid-append can leave a last line without its newline; that act was never
 * acknowledged. The cut line is dropped, however long it is. Only the holder of the
 * journal's lock may mend it.
 */
function mendOpen(fd: number) {
  const { size } = fstatSync(fd);
  if (size === 0) return;
  // Almost always whole: its last byte says so, without reading more.
  const last = Buffer.allocUnsafe(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] === 0x0a) return;
  const chunk = Buffer.allocUnsafe(Math.min(size, 1 << 16));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    readSync(fd, chunk, 0, end - start, start);
    const seen = chunk.subarray(0, end - start);
    const lastNewline = seen.lastIndexOf(0x0a);
    if (lastNewline >= 0) {
      end = start + lastNewline + 1;
      break;
    }
    end = start;
  }
  ftruncateSync(fd, end);
}
