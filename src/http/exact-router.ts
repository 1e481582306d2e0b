import { METHOD_NAME_ALL, type Result, type Router } from 'hono/router';

/**
 * A Hono router for routes that are exact paths, as berth's five are: one lookup by
 * method and path. The handlers added for one method and path are that route's chain,
 * in the order given (its middleware, then its handler). The route `ALL /*`
 * (`app.all('*')`) is not a route but the fallback, taken only when nothing else
 * matches, so that every request meets exactly one chain and Hono answers a 404 on its
 * direct path (its own not-found goes through middleware composition, a promise and
 * an extra listener per request).
 */
export class ExactRouter<T> implements Router<T> {
  name = 'ExactRouter';
  #routes = new Map<string, Map<string, [[T, Record<string, never>][]]>>();
  #fallback: Result<T> = [[]];

  add(method: string, path: string, handler: T): void {
    if (method === METHOD_NAME_ALL && path === '/*') {
      this.#fallback = [[[handler, {}]]];
      return;
    }
    if (/[:*{]/.test(path)) throw new TypeError(`ExactRouter takes exact paths only, not ${path}`);
    const paths = this.#routes.get(method) ?? new Map<string, [[T, Record<string, never>][]]>();
    this.#routes.set(method, paths);
    const chain = paths.get(path) ?? [[]];
    chain[0].push([handler, {}]);
    paths.set(path, chain);
  }

  match(method: string, path: string): Result<T> {
    return this.#routes.get(method)?.get(path) ?? this.#fallback;
  }
}
