import { open, stat, truncate } from 'node:fs/promises';

/** Appends one line and makes it durable before the act is acknowledged. */
export async function appendLine(path: string, line: string) {
  const file = await open(path, 'a', 0o600);
  try {
    await file.appendFile(`${line}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * A crash mid-append can leave a last line without its newline; that act was never
 * acknowledged. The cut line is dropped, however long it is. Only the holder of the
 * journal's lock may call it.
 */
export async function mendJournal(path: string) {
  const info = await stat(path).catch(() => undefined);
  if (!info || info.size === 0) return;
  const file = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(Math.min(info.size, 1 << 16));
    let end = info.size;
    for (let first = true; end > 0; first = false) {
      const start = Math.max(0, end - chunk.length);
      await file.read(chunk, 0, end - start, start);
      const seen = chunk.subarray(0, end - start);
      if (first && seen[seen.length - 1] === 0x0a) return;
      const lastNewline = seen.lastIndexOf(0x0a);
      if (lastNewline >= 0) {
        end = start + lastNewline + 1;
        break;
      }
      end = start;
    }
    await truncate(path, end);
  } finally {
    await file.close();
  }
}
