import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Live, LiveEvent } from './live.ts';

/** A comment line this often keeps a quiet stream open through proxies and idle timers. */
const KEEP_ALIVE_MS = 15_000;

/**
 * `GET /live`: server-sent events, one `data:` line of JSON a LiveEvent, for as long as the
 * page is open (or the view is stopped: `closing` aborts).
 */
export function liveStream(c: Context, live: Live, closing: AbortSignal) {
  return streamSSE(c, async (stream) => {
    const queue: LiveEvent[] = [];
    let wake: (() => void) | undefined;
    const unfollow = live.follow((event) => {
      queue.push(event);
      wake?.();
    });
    const ended = new Promise<void>((resolve) => {
      stream.onAbort(resolve);
      closing.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      await stream.writeSSE({ event: 'hello', data: '{}', retry: 3000 });
      while (!stream.aborted && !closing.aborted) {
        const event = queue.shift();
        if (event) {
          await stream.writeSSE({ data: JSON.stringify(event) });
          continue;
        }
        const next = new Promise<void>((resolve) => {
          wake = resolve;
        });
        const quiet = new Promise<'quiet'>((resolve) =>
          setTimeout(() => resolve('quiet'), KEEP_ALIVE_MS).unref?.(),
        );
        if ((await Promise.race([next, quiet, ended])) === 'quiet')
          await stream.write(': still here\n\n');
        wake = undefined;
      }
    } finally {
      unfollow();
    }
  });
}
