/** The largest request body berth reads: a command request is a few hundred bytes. */
const BODY_LIMIT = 64 * 1024;

export type Body =
  | { ok: true; text: string }
  | { ok: false; tooLarge: true }
  | { ok: false; message: string };

/** Reads a request body as UTF-8 text, stopping as soon as it passes `limit` bytes. */
export async function readBody(request: Request, limit = BODY_LIMIT): Promise<Body> {
  const length = request.headers.get('content-length');
  if (Number(length ?? '0') > limit) return { ok: false, tooLarge: true };
  if (length !== null && !request.headers.has('transfer-encoding')) {
    // Framed by its declared length, so no larger than the limit: read it whole. On Node
    // this is several times faster than a stream, which `request.body` would build.
    let whole: ArrayBuffer;
    try {
      whole = await request.arrayBuffer();
    } catch {
      return { ok: false, message: 'the body did not arrive whole' };
    }
    if (whole.byteLength > limit) return { ok: false, tooLarge: true };
    return decodeText(new Uint8Array(whole));
  }
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    // On Node the body stream is made when first asked for; from a request whose framing
    // Node's parser has already refused (a bad chunk size, an unknown Transfer-Encoding),
    // making it throws. That client has had its 400 from the server; this one is unheard.
    const body = request.body;
    if (!body) return { ok: true, text: '' };
    reader = body.getReader();
  } catch {
    return { ok: false, message: 'the body did not arrive whole' };
  }
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
  return decodeText(bytes);
}

function decodeText(bytes: Uint8Array): Body {
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, message: 'the body is not UTF-8 text' };
  }
}
