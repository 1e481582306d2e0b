import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { getRequestListener } from '@hono/node-server';
import type { StateLocation } from '../config/state-dir.ts';
import { newToken } from '../view/access.ts';
import { createViewApp } from '../view/app.ts';
import { parseListenAddress } from '../view/listen-address.ts';
import { followStore } from '../view/live.ts';
import { viewSource } from '../view/source.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { osUser } from './run-command.ts';

/** How often a followed page reads the store's locks and journal. */
const LIVE_EVERY_MS = 500;

export interface ViewFlags {
  listen: string;
  /** `--state DIR` as given, for the command a node's page shows to copy. */
  state?: string;
  lockWaitMs: number;
}

/**
 * `berth view`: serves the read-only view of the fleet on loopback until SIGINT or SIGTERM,
 * printing its address with a fresh token (the only way in), then ends with 0.
 */
export async function runView(flags: ViewFlags, location: StateLocation, io: Io): Promise<number> {
  const address = parseListenAddress(flags.listen);
  if ('refused' in address) throw new UsageError(address.refused);
  const deps = stateDeps(location, io.env, { lockWaitMs: flags.lockWaitMs });
  const source = viewSource(deps, { actor: osUser(io), lockWaitMs: flags.lockWaitMs });
  const live = followStore(
    { holders: () => source.holders(), journal: () => source.journal() },
    { host: hostname(), pid: process.pid },
    LIVE_EVERY_MS,
  );
  const token = newToken();
  const closing = new AbortController();
  // Its handler is given once the port is known: the cookie is named by it. A live stream
  // lasts as long as its page, so no deadline cuts a request.
  const server = createServer({ requestTimeout: 0 });
  const listening = new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.hostname, () => resolve(server.address() as AddressInfo));
  });
  let bound: AddressInfo;
  try {
    bound = await listening;
  } catch (error) {
    io.err(`berth view cannot listen on ${flags.listen}: ${(error as Error).message}`);
    return EXIT.refused;
  }
  const app = createViewApp({
    source,
    live,
    token,
    // Cookies are kept by host, not port: two views on one machine keep one each.
    cookie: `berth_view_${bound.port}`,
    berth: flags.state === undefined ? 'berth' : `berth --state ${shellWord(flags.state)}`,
    closing: closing.signal,
  });
  server.on('request', getRequestListener(app.fetch, { hostname: address.hostname }));
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  io.out(`berth view of ${location.dir}, read-only, until Ctrl-C:`);
  io.out(`http://${host}:${bound.port}/?token=${token}`);

  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await stopped;
  closing.abort();
  live.stop();
  server.close();
  server.closeAllConnections();
  await source.close().catch(() => {});
  return EXIT.done;
}

/** A word as sh reads it back unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
