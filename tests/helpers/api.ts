import { fileDeps } from '../../src/cli/deps.ts';
import { routes } from '../../src/commands/table.ts';
import { locateState } from '../../src/config/state-dir.ts';
import { type AppOptions, createApp } from '../../src/http/app.ts';
import type { Answer } from '../core/api-suite.ts';
import { acceptAs } from './world.ts';

/** The 404's words, and an answer as a client reads it, as the API suite holds them. */
export { type Answer, noRoute } from '../core/api-suite.ts';

/** The app as createApp makes it. */
export type App = ReturnType<typeof createApp>;

/** The app over a real state directory, as `berth api` builds it, but acting as alice. */
export function appOver(state: string, options: Partial<AppOptions> = {}): App {
  return createApp({
    routes: routes(),
    authenticator: acceptAs('alice'),
    ...fileDeps(locateState(state)),
    ...options,
  });
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
