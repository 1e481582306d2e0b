import { clip } from '../utils/clip.ts';

/** A method as HTTP spells one: a token (RFC 9110 §5.6.2). */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The method and path of the request line that Node's parser refused for its method
 * (one it does not know, as `BREW /` or `post /assign`), read from the bytes it refused,
 * so that such a request is answered 404 like any other that no route matches. The path
 * is spelled as the URL standard spells it (as a routed 404 names it), both are cut
 * short, and undefined means the bytes hold no whole request line: not a request at all.
 */
export function refusedRequestLine(
  packet: Buffer | undefined,
  at = 0,
): { method: string; path: string } | undefined {
  if (!packet) return undefined;
  // The method is the run of token characters the parser stopped in (`at`): the bytes
  // before it may be another request's, pipelined on the same connection.
  let start = Math.min(at, packet.length);
  while (start > 0 && METHOD.test(String.fromCharCode(packet[start - 1] as number))) start--;
  const end = packet.indexOf('\r\n', start);
  if (end < 0) return undefined;
  const line = packet.subarray(start, Math.min(end, start + 16_384)).toString('latin1');
  const [method, target, version, ...rest] = line.split(' ');
  if (rest.length > 0 || !method || !target || !/^HTTP\/1\.[01]$/.test(version ?? ''))
    return undefined;
  if (!METHOD.test(method) || !/^[\x21-\x7e]+$/.test(target)) return undefined;
  const path = pathOf(target);
  return path === undefined ? undefined : { method: clip(method, 40), path: clip(path, 100) };
}

function pathOf(target: string): string | undefined {
  if (target === '*') return target;
  try {
    if (target.startsWith('/')) return new URL(`http://berth${target}`).pathname;
    if (/^https?:\/\//i.test(target)) return new URL(target).pathname;
  } catch {
    return undefined;
  }
  return undefined;
}
