import { commands } from '../commands/table.ts';

const ROUTES = commands.map((command) => `POST ${command.route}`).join(', ');

/** The 404 words: the method and path asked for, and the five routes berth answers. */
export function noRoute(method: string, path: string): string {
  return `no route for ${method} ${path}; berth answers ${ROUTES}`;
}
