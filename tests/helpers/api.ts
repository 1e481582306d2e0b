import { type AppOptions, createApp } from '../../src/http/app.ts';

/** The app as createApp makes it. */
export type App = ReturnType<typeof createApp>;

import { fileDeps } from '../../src/cli/deps.ts';
import { routes } from '../../src/commands/table.ts';
import { locateState } from '../../src/config/state-dir.ts';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { acceptAs } from './world.ts';

/** The five routes, as the 404 lists them. */
export const ROUTES = [
  'POST /assign',
  'POST /unassign',
  'POST /take',
  'POST /converge',
  'POST /adopt',
] as const;

export function noRoute(method: string, path: string): string {
  return `no route for ${method} ${path}; berth answers ${ROUTES.join(', ')}`;
}

/** The app over a real state directory, as `berth api` builds it, but acting as alice. */
export function appOver(state: string, options: Partial<AppOptions> = {}): App {
  return createApp({
    routes: routes(),
    authenticator: acceptAs('alice'),
    ...fileDeps(locateState(state)),
    ...options,
  });
}

export const REFUSED_ALL = {
  refused: 'the test authenticator refuses everyone',
  challenge: 'Bearer realm="berth", error="invalid_token", error_description="refused by the test"',
};

/** A test authenticator that refuses every request, to see what the app does with a refusal. */
export function refuseAll(): Authenticator {
  return { authenticate: () => async () => ({ ok: false, ...REFUSED_ALL }) };
}

export interface Answer {
  status: number;
  type: string | null;
  headers: Headers;
  /** The JSON body, or undefined when there was none (a HEAD). */
  body: Record<string, unknown> | undefined;
}

/** One request through Hono's in-process `request()`, with the answer's body parsed. */
export async function ask(
  app: App,
  method: string,
  path: string,
  body?: string | Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await app.request(path, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

/** A POST of a JSON value. */
export function post(app: App, path: string, json: unknown, headers?: Record<string, string>) {
  return ask(app, 'POST', path, JSON.stringify(json), headers);
}
