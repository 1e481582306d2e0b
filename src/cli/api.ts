import { setMaxListeners } from 'node:events';
import { NO_ISSUER } from '../commands/options.ts';
import { routes } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { accessLog } from '../http/access-log.ts';
import { createApp } from '../http/app.ts';
import type { Authenticator } from '../http/authenticator.ts';
import { issuerAuthenticator, unusableIssuer } from '../http/issuer-authenticator.ts';
import { listen } from '../http/serve.ts';
import { trustingFetch } from '../http/trusting-fetch.ts';
import { StoreError, type Stores } from '../stores/stores.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { readIssuerCas, stateCaTrust } from './issuer-cas.ts';
import { moduleIssuer, namesModule } from './module-issuer.ts';
import { moduleIssuerRefusalWords, moduleIssuerWords } from './module-issuer-words.ts';

export interface ApiFlags {
  listen: string;
  issuer: string;
  audience: string;
  /** `--issuer-ca FILE`s: CAs trusted for the issuer, besides the system's and the state's. */
  issuerCa: readonly string[];
  /** How long a request waits for a node's lock (`--lock-timeout`); the stores' own wait when not given. */
  lockWaitMs?: number;
}

/**
 * `berth api`: serves the Command API until SIGINT or SIGTERM, then closes
 * gracefully and ends with 0. Refuses to start without an issuer it could believe.
 */
export async function runApi(flags: ApiFlags, location: StateLocation, io: Io): Promise<number> {
  // Not given at all; given empty or blank, the option's own reading refuses it so.
  if (flags.issuer === '') throw new UsageError(NO_ISSUER);
  const issuerCas = readIssuerCas(flags.issuerCa);
  const log = (line: string) => io.err(line);
  const issuer = namesModule(flags.issuer)
    ? await resolvedIssuer(flags.issuer, location, io)
    : usableIssuer(flags.issuer);
  return serveApi({
    authenticator: (stores) => {
      const stateCa = stateCaTrust(stores, log);
      return issuerAuthenticator({
        issuer,
        audience: flags.audience,
        log,
        // The state's CA and --issuer-ca, besides the system's: a module berth placed
        // serves its issuer with a certificate the state's CA signed.
        fetch: trustingFetch(async () => [...(await stateCa()), ...issuerCas]),
      });
    },
    issuer,
    address: parseListen(flags.listen),
    lockWaitMs: flags.lockWaitMs,
    location,
    io,
  });
}

/** An issuer's URL as given, if berth would believe tokens from it. */
function usableIssuer(url: string): string {
  const unusable = unusableIssuer(url);
  if (unusable) throw new UsageError(unusable);
  return url;
}

/**
 * The issuer `--issuer MODULE@NODE` names, resolved once at the start, before listening
 * (the module need not be up: its 401 says so until it is); where it came from is said.
 */
async function resolvedIssuer(named: string, location: StateLocation, io: Io): Promise<string> {
  const deps = stateDeps(location, io.env);
  try {
    const answer = await moduleIssuer(named, deps);
    if ('refused' in answer) throw new UsageError(moduleIssuerRefusalWords(named, answer.refused));
    io.err(moduleIssuerWords(named, answer));
    return answer.url;
  } finally {
    await deps.stores.close().catch(() => {});
  }
}

export interface ServeOptions {
  /** The authenticator, or how to make it from the stores berth api serves over. */
  authenticator: Authenticator | ((stores: Stores) => Authenticator);
  /** Named in the second start line. */
  issuer: string;
  address: { hostname: string; port: number };
  /** How long a request waits for a node's lock; the stores' own wait when not given. */
  lockWaitMs?: number;
  location: StateLocation;
  io: Io;
}

/**
 * Serves the Command API over the stores berth.json names until SIGINT or SIGTERM, prints the
 * three start lines, and ends with 0 after the graceful close.
 */
export async function serveApi(options: ServeOptions): Promise<number> {
  const { io } = options;
  const cutting = new AbortController();
  // Every act in flight, and every node of a target, listens for the one close deadline.
  setMaxListeners(0, cutting.signal);
  const deps = stateDeps(options.location, io.env, { lockWaitMs: options.lockWaitMs });
  const { authenticator } = options;
  const app = createApp({
    ...deps,
    routes: routes(),
    stores: unlessCut(deps.stores, cutting.signal),
    authenticator: typeof authenticator === 'function' ? authenticator(deps.stores) : authenticator,
    stopping: cutting.signal,
  });

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const log = accessLog((lines) => io.err(lines));
    // Lines wait for the end of the event loop's turn; an exit (the deadline's, or any
    // other) writes them first.
    process.once('exit', log.flush);
    const served = await listen(app.fetch, options.address, stop.signal, { log });
    served.cut.addEventListener('abort', () => cutting.abort(served.cut.reason));
    io.out(`serving ${served.url}`);
    io.out(`accepting tokens from ${options.issuer}`);
    io.out('every route calls what the command line calls');
    await served.closed;
    // An act cut at the deadline has had its hook stopped and is recording what it did;
    // give it a moment, but let nothing (a keep-alive socket to the issuer) hold the exit.
    setTimeout(() => process.exit(EXIT.done), 1_000).unref();
    return EXIT.done;
  } catch (error) {
    const { hostname, port } = options.address;
    const host = hostname.includes(':') ? `[${hostname}]` : hostname;
    io.err(`berth api cannot listen on ${host}:${port}: ${(error as Error).message}`);
    return EXIT.refused;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * The stores, refusing an act that has not begun once acts are being cut at the close
 * deadline: one still waiting for its node's lock would begin after its hook could run.
 */
function unlessCut(stores: Stores, cut: AbortSignal): Stores {
  const refusal = () =>
    new StoreError(
      'berth api is shutting down, and the act was not begun; send it again once berth api is back',
    );
  return {
    ...stores,
    async openNode(node, act) {
      if (cut.aborted) throw refusal();
      const opened = await stores.openNode(node, act);
      if (!cut.aborted) return opened;
      await opened.close().catch(() => {});
      throw refusal();
    },
  };
}

/** `host:port`, with IPv6 hosts in brackets: `[::1]:8081`. */
function parseListen(text: string): { hostname: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new UsageError(
      `--listen takes host:port, like 127.0.0.1:8081 or [::1]:8081, not ${JSON.stringify(text)}`,
    );
  }
  return { hostname: match[1] ?? (match[2] as string), port };
}
