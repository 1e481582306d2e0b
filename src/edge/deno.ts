/**
 * berth's Command API served by Deno: `createApp` as it is, handed to `Deno.serve`. The
 * caller gives the stores, the machines, the configuration and the authenticator (at the
 * edge, `memoryStores()` or a store of the host's), so this file imports nothing of
 * Node's. It is the proof that the core is standards-only: `deno check` and
 * `tsconfig.core.json` check it, and the core's tests run under Deno too.
 *
 * What it leaves to the host: Node's server (`http/serve.ts`) also sets the header and
 * request deadlines, answers 400 to a request without Host or with an Upgrade, refuses
 * bytes that are not HTTP, and closes gracefully within 5 s on a signal. Here the host
 * (Deno, or the edge platform) decides those.
 */
import { routes } from '../commands/table.ts';
import { type AppOptions, createApp } from '../http/app.ts';

/** What this file uses of Deno's namespace, so that it type-checks without Deno's types too. */
interface DenoServer {
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}
declare const Deno: {
  serve(
    options: {
      port?: number;
      hostname?: string;
      signal?: AbortSignal;
      onListen?: (address: { hostname: string; port: number }) => void;
    },
    handler: (request: Request) => Response | Promise<Response>,
  ): DenoServer;
};

export interface DenoServeOptions extends Omit<AppOptions, 'routes'> {
  /** 0 picks a free port; the default is 8081, as `berth api`'s. */
  port?: number;
  /** The default is 127.0.0.1: berth answers only this machine unless told otherwise. */
  hostname?: string;
  /** Aborting stops listening; it is also the app's `stopping`, unless that is given. */
  signal?: AbortSignal;
  /** Told where the server listens, once it does. */
  onListen?: (address: { hostname: string; port: number }) => void;
}

/** Serves the Command API with `Deno.serve` until `signal` aborts. */
export function serveOnDeno(options: DenoServeOptions): DenoServer {
  const { port = 8081, hostname = '127.0.0.1', signal, onListen, ...app } = options;
  const api = createApp({ ...app, routes: routes(), stopping: app.stopping ?? signal });
  return Deno.serve({ port, hostname, signal, onListen: onListen ?? (() => {}) }, (request) =>
    api.fetch(request),
  );
}
