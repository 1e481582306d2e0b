import type { Served } from '../http/serve.ts';

/** The most connections the view holds at once: a few browsers' pages and live streams. */
export const VIEW_CONNECTIONS = 64;

/**
 * berth view as the server answers what never reaches its app (a request Node cannot
 * read, headers not in within 10 s, one while it closes): words in plain text, and at most
 * VIEW_CONNECTIONS connections at once.
 */
export const VIEW_SERVED: Served = {
  name: 'berth view',
  answer: (refused, code) => ({
    type: 'text/plain; charset=utf-8',
    body: `${refused} (${code})\n`,
  }),
  noRoute: (method, path) => `berth view has no page for ${method} ${path.slice(0, 200)}`,
  maxConnections: VIEW_CONNECTIONS,
};
