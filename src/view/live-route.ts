import type { Context, Handler } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Live, LiveEvent } from './live.ts';
import { wordsPage } from './words-page.ts';

/** A comment line this often keeps a quiet stream open through proxies and idle timers. */
const KEEP_ALIVE_MS = 15_000;

/** The most pages followed live at once: each holds a connection for as long as it is open. */
export const LIVE_STREAMS = 16;

/**
 * `GET /live`: server-sent events, one `data:` line of JSON a LiveEvent, for as long as the
 * page is open (or the view is stopped: `closing` aborts); at most LIVE_STREAMS at once,
 * one more answered 503 in words. HEAD has no body to stream, and no page to follow.
 */
export function liveRoute(live: Live, closing: AbortSignal, limit = LIVE_STREAMS): Handler {
  let open = 0;
  return (c) => {
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'Content-Type': 'text/event-stream' });
    if (open >= limit)
      return c.html(
        wordsPage(
          'Too many pages follow the view',
          `berth view follows at most ${limit} pages live at once, and ${open} do now. Close a page of the view you no longer read; this one still reads whole without its live part.`,
        ),
        503,
      );
    open++;
    return liveStream(c, live, closing, () => {
      open--;
    });
  };
}

function liveStream(c: Context, live: Live, closing: AbortSignal, done: () => void) {
  return streamSSE(c, async (stream) => {
    const queue: LiveEvent[] = [];
    let wake: (() => void) | undefined;
    const unfollow = live.follow((event) => {
      queue.push(event);
      wake?.();
    });
    let stopped = () => {};
    const ended = new Promise<void>((resolve) => {
      stream.onAbort(resolve);
      stopped = () => resolve();
      closing.addEventListener('abort', stopped, { once: true });
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
      // A page gone leaves nothing on the view's own signal.
      closing.removeEventListener('abort', stopped);
      unfollow();
      done();
    }
  });
}
