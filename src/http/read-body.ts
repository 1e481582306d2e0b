/** The largest request body berth reads: a command request is a few hundred bytes. */
export const BODY_LIMIT = 64 * 1024;

export type Body =
  | { ok: true; text: string }
  | { ok: false; tooLarge: true }
  | { ok: false; message: string };

/** Reads a request body as UTF-8 text, stopping as soon as it passes `limit` bytes. */
export async function readBody(request: Request, limit = BODY_LIMIT): Promise<Body> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limit) return { ok: false, tooLarge: true };
  if (!request.body) return { ok: true, text: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch {
      // The client went away, or was cut at the request deadline: no one hears the answer.
      return { ok: false, message: 'the body did not arrive whole' };
    }
    const { done, value } = next;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false, tooLarge: true };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, message: 'the body is not UTF-8 text' };
  }
}
