/**
 * The API world of the tests: a state, a loopback issuer, the Command API believing that
 * issuer's tokens (the real `berth api` process, or the app built in this process as
 * `berth api` builds it), a token for each subject, and a close that leaves nothing behind.
 */
import type { Agent } from 'node:http';
import { fileDeps } from '../../src/cli/deps.ts';
import { routes } from '../../src/commands/table.ts';
import { locateState } from '../../src/config/state-dir.ts';
import { createApp } from '../../src/http/app.ts';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { issuerAuthenticator, type Timing } from '../../src/http/issuer-authenticator.ts';
import type { App } from './api.ts';
import { type ApiProcess, type Exit, type HttpAnswer, httpAsk, startApi } from './api-process.ts';
import { type Issuer, type IssuerOptions, startIssuer } from './issuer.ts';
import { makeWorld, type World } from './world.ts';

/** The subject a token is for unless told: the issuer's own default. */
export const SUBJECT = 'alice@example.org';

export interface WorldOptions {
  /**
   * The world to serve, left as it is at the close (several APIs over one state, or one
   * state served again). Without it a world is made with `modules`, readied by `prepare`
   * before the API serves it, and removed at the close.
   */
  world?: World;
  modules?: Record<string, unknown>;
  prepare?: (world: World) => Promise<void>;
  /** How the issuer answers its well-known paths. */
  issuer?: IssuerOptions;
  /** The issuer is down from the start: the API believes its URL; `issuer.up()` brings it. */
  issuerDown?: boolean;
}

export interface ServedOptions extends WorldOptions {
  /** Where berth api listens: a free port on 127.0.0.1 unless told. */
  listen?: string;
  /** Flags of `berth api` beside its listen, issuer and state (`--lock-timeout 1s`). */
  flags?: string[];
  /** Laid over the user's environment; a name given undefined is taken out. */
  env?: Record<string, string | undefined>;
  /** A command berth api is run through (`unshare -m …`), as runBerth's. */
  launcher?: readonly string[];
}

export interface InProcessOptions extends WorldOptions {
  /** The app built here, with the authenticator `berth api` builds, these timings shortened. */
  inProcess: { timing?: Partial<Timing>; log?: (line: string) => void };
}

/** How a request is sent: as whom, or with what credentials; its method and headers. */
export interface Asking {
  /** The token's subject; SUBJECT unless told. */
  as?: string;
  /** This token instead of one for `as`; null for no Authorization header at all. */
  token?: string | null;
  method?: string;
  headers?: Record<string, string>;
  agent?: Agent;
}

export interface ApiWorld {
  world: World;
  issuer: Issuer;
  /** A token for `subject`, made once and kept. */
  token(subject?: string): Promise<string>;
  /** `body` as JSON (a text as it is) to `route`, with a token for `asking.as`. */
  ask(route: string, body: unknown, asking?: Asking): Promise<HttpAnswer>;
  close(): Promise<void>;
}

/** The real `berth api` process, on a loopback port of its own. */
export interface ServedApiWorld extends ApiWorld {
  api: ApiProcess;
  url: string;
  port: number;
  /** SIGTERM, as an operator stops it: resolves at its exit, once it has said all it had. */
  end(): Promise<Exit>;
}

/** The app in this process, as `berth api` builds it over the world's state. */
export interface InProcessApiWorld extends ApiWorld {
  app: App;
  /** The same app and authenticator over another state directory. */
  appOver(state: string): App;
}

export function apiWorld(options: InProcessOptions): Promise<InProcessApiWorld>;
export function apiWorld(options?: ServedOptions): Promise<ServedApiWorld>;
export async function apiWorld(
  options: ServedOptions | InProcessOptions = {},
): Promise<ServedApiWorld | InProcessApiWorld> {
  const owned = options.world === undefined;
  const world = options.world ?? (await makeWorld(options.modules));
  let issuer: Issuer | undefined;
  const closeWorld = async () => {
    await issuer?.close();
    if (owned) await world.cleanup();
  };
  try {
    if (owned) await options.prepare?.(world);
    issuer = await startIssuer(options.issuer);
    if (options.issuerDown) await issuer.down();
  } catch (error) {
    await closeWorld();
    throw error;
  }
  const believed = issuer;
  const tokens = new Map<string, Promise<string>>();
  const token = (subject = SUBJECT) => {
    const made = tokens.get(subject) ?? believed.token({ sub: subject });
    tokens.set(subject, made);
    return made;
  };
  const credentials = async (asking: Asking): Promise<Record<string, string>> => {
    const bearer = asking.token === undefined ? await token(asking.as) : asking.token;
    return bearer === null ? {} : { Authorization: `Bearer ${bearer}` };
  };
  const textOf = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));

  if ('inProcess' in options) {
    const authenticator: Authenticator = issuerAuthenticator({
      issuer: believed.url,
      audience: 'berth',
      timing: options.inProcess.timing,
      log: options.inProcess.log,
    });
    const appOver = (state: string) =>
      createApp({ routes: routes(), authenticator, ...fileDeps(locateState(state)) });
    const app = appOver(world.state);
    return {
      world,
      issuer: believed,
      app,
      appOver,
      token,
      async ask(route, body, asking = {}) {
        const headers = {
          'Content-Type': 'application/json',
          ...(await credentials(asking)),
          ...asking.headers,
        };
        const response = await app.request(route, {
          method: asking.method ?? 'POST',
          headers,
          body: textOf(body),
        });
        const text = await response.text();
        return {
          status: response.status,
          headers: Object.fromEntries(response.headers),
          text,
          body: text ? JSON.parse(text) : undefined,
        };
      },
      close: closeWorld,
    };
  }

  let api: ApiProcess;
  try {
    api = await startApi(
      [
        ...['--listen', options.listen ?? '127.0.0.1:0'],
        ...['--issuer', believed.url, '--state', world.state],
        ...(options.flags ?? []),
      ],
      options.env,
      options.launcher,
    );
  } catch (error) {
    await closeWorld();
    throw error;
  }
  return {
    world,
    issuer: believed,
    api,
    url: api.url,
    port: api.port,
    token,
    async ask(route, body, asking = {}) {
      return httpAsk(api.url, {
        method: asking.method,
        path: route,
        body: textOf(body),
        headers: {
          'Content-Type': 'application/json',
          ...(await credentials(asking)),
          ...asking.headers,
        },
        agent: asking.agent,
      });
    },
    end() {
      api.child.kill('SIGTERM');
      return api.exited;
    },
    async close() {
      await api.stop();
      await closeWorld();
    },
  };
}
