import { type FileHandle, open } from 'node:fs/promises';

/**
 * Appends one line and makes it durable before the act is acknowledged. With `mend`, a
 * cut last line is dropped first (see `mend`), through the same open file.
 */
export async function appendLine(path: string, line: string, { mend = false } = {}) {
  const file = await open(path, 'a+', 0o600);
  try {
    if (mend) await mendOpen(file);
    await file.appendFile(`${line}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * A crash mid-append can leave a last line without its newline; that act was never
 * acknowledged. The cut line is dropped, however long it is. Only the holder of the
 * journal's lock may mend it.
 */
async function mendOpen(file: FileHandle) {
  const { size } = await file.stat();
  if (size === 0) return;
  const chunk = Buffer.alloc(Math.min(size, 1 << 16));
  let end = size;
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
  await file.truncate(end);
}
