import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';

/** The seed's limits: headers within 10 s, a graceful close of at most 5 s. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const SHUTDOWN_GRACE_MS = 5_000;
/** A whole request (headers and body) must arrive within this; a stalled body is cut. */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface Listening {
  /** The address served, as `http://host:port`. */
  url: string;
  /** Resolves once the server has closed, gracefully or at the deadline. */
  closed: Promise<void>;
}

/**
 * Serves a fetch handler on a Node socket until `signal` aborts, then closes
 * gracefully: no new connections, idle ones closed at once, requests in flight
 * given up to 5 s, then every connection cut.
 */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  address: { hostname: string; port: number },
  signal: AbortSignal,
): Promise<Listening> {
  const server = createAdaptorServer({
    fetch,
    hostname: address.hostname,
    port: address.port,
    serverOptions: {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Node checks the two deadlines above only this often (30 s by default).
      connectionsCheckingInterval: 500,
      keepAliveTimeout: 5_000,
    },
  }) as Server;

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.hostname, () => {
      server.off('error', reject);
      const bound = server.address() as AddressInfo;
      const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      resolve({ url: `http://${host}:${bound.port}`, closed: closeOn(server, signal) });
    });
  });
}

function closeOn(server: Server, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const close = () => {
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(deadline);
        resolve();
      });
      server.closeIdleConnections();
    };
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
  });
}
