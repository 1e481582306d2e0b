import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { StateLocation } from '../config/state-dir.ts';
import { listen } from '../http/serve.ts';
import { ViewKeys } from '../view/access.ts';
import { createViewApp } from '../view/app.ts';
import { parseListenAddress } from '../view/listen-address.ts';
import { followStore } from '../view/live.ts';
import { VIEW_SERVED } from '../view/served.ts';
import { viewSource } from '../view/source.ts';
import { osUser, stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';

/** How often a followed page reads the store's locks and journal. */
const LIVE_EVERY_MS = 500;

export interface ViewFlags {
  listen: string;
  /** `--state DIR` as given, for the command a node's page shows to copy. */
  state?: string;
  /** `--lock-timeout`; the stores' own wait when not given. */
  lockWaitMs?: number;
}

/**
 * `berth view`: serves the view of the fleet on loopback until SIGINT or SIGTERM, under
 * a name of its own, printing its address with a fresh token (the only way in), then
 * ends with 0. It is served as the Command API is (`listen`): the same deadlines, caps
 * and graceful close.
 */
export async function runView(flags: ViewFlags, location: StateLocation, io: Io): Promise<number> {
  const address = parseListenAddress(flags.listen);
  if ('refused' in address) throw new UsageError(address.refused);
  const stop = new AbortController();
  // Every live stream and every survey listens for the one stop.
  setMaxListeners(0, stop.signal);
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const deps = stateDeps(location, io.env, { lockWaitMs: flags.lockWaitMs });
  const source = viewSource(deps, {
    actor: osUser(io),
    line: { lockTimeout: flags.lockWaitMs },
    signal: stop.signal,
  });
  const live = followStore(
    { holders: () => source.holders(), journal: () => source.journal() },
    { host: hostname(), pid: process.pid },
    LIVE_EVERY_MS,
  );
  const keys = new ViewKeys();
  const app = createViewApp({
    source,
    live,
    keys,
    berth: flags.state === undefined ? 'berth' : `berth --state ${shellWord(flags.state)}`,
    closing: stop.signal,
  });
  try {
    let served: Awaited<ReturnType<typeof listen>>;
    try {
      served = await listen(app.fetch, address, stop.signal, { as: VIEW_SERVED });
    } catch (error) {
      io.err(`berth view cannot listen on ${flags.listen}: ${(error as Error).message}`);
      return EXIT.refused;
    }
    const port = new URL(served.url).port;
    io.out(`berth view of ${location.dir}, until Ctrl-C (it surveys when asked, and never acts):`);
    io.out(`http://${keys.name}:${port}/?token=${keys.token}`);
    await served.closed;
    // A survey still waiting for a node's lock when the connections were closed has no
    // one left to answer: it is not waited for.
    setTimeout(() => process.exit(EXIT.done), 1_000).unref();
    return EXIT.done;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    live.stop();
    await source.close().catch(() => {});
  }
}

/** A word as sh reads it back unchanged. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
