import type { OpenedAct } from '../commands/act-shapes.ts';
import type { CommandRequest } from '../model/request.ts';

/** What the middleware chain hands on, step by step, to the command at its end. */
export type ApiEnv = {
  Variables: {
    /** Who acts: the token's subject. */
    actor: string;
    request: CommandRequest;
    act: Extract<OpenedAct, { kind: 'ready' }>;
  };
};

/** A JSON answer, as every answer of the Command API is; `body` may be JSON text made before. */
export function answer(
  status: number,
  body: object | string,
  headers: Record<string, string> = {},
): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}
