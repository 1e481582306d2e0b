import type { IncomingMessage, ServerResponse } from 'node:http';
import { accessFactsOf } from './access-facts.ts';

/** The longest path or node name a line keeps: a request can name one of 60,000 characters. */
const KEPT = 200;

export interface AccessLog {
  /** Called as a request arrives: its line is written once its answer is done. */
  record(request: IncomingMessage, response: ServerResponse): void;
  /** Writes the lines still waiting: at the close, before berth api exits. */
  flush(): void;
}

/**
 * `berth api`'s access log: one JSON line a request — time, method, path (without its
 * query, where a careless client puts a token), status, subject, node, milliseconds.
 * Lines are gathered and written once a turn of the event loop, so a burst of requests
 * costs one write, not one each.
 */
export function accessLog(write: (text: string) => void): AccessLog {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('\n');
    pending = [];
    write(text);
  };
  return {
    record(request, response) {
      const began = performance.now();
      response.once('close', () => {
        const facts = accessFactsOf(request);
        const url = request.url ?? '';
        const query = url.indexOf('?');
        const path = query === -1 ? url : url.slice(0, query);
        if (pending.length === 0) setImmediate(flush);
        pending.push(
          JSON.stringify({
            time: new Date().toISOString(),
            method: request.method,
            path: path.length > KEPT ? `${path.slice(0, KEPT)}…` : path,
            status: response.statusCode,
            subject: facts?.subject ?? null,
            node:
              facts?.node === undefined
                ? null
                : facts.node.length > KEPT
                  ? `${facts.node.slice(0, KEPT)}…`
                  : facts.node,
            ms: Math.round((performance.now() - began) * 10) / 10,
          }),
        );
      });
    },
    flush,
  };
}
