import type { Route } from '../commands/command-shape.ts';

/** The 404 words: the method and path asked for, and the routes berth answers. */
export function noRoute(routes: readonly Pick<Route, 'route'>[]) {
  const listed = routes.map((route) => `POST ${route.route}`).join(', ');
  return (method: string, path: string) =>
    `no route for ${method} ${path}; berth answers ${listed}`;
}
