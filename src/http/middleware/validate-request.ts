import { createMiddleware } from 'hono/factory';
import { missingFields } from '../../commands/act.ts';
import type { CommandShape as Command } from '../../commands/command-shape.ts';
import { decodeRequest } from '../../model/request.ts';
import { noteAccess } from '../access-facts.ts';
import type { ApiEnv } from '../answer.ts';
import { refusal, refusedAs } from '../refusal.ts';

/**
 * Steps 2 and 3: the body (no more than Hono's bodyLimit let through) decoded as JSON
 * into the request (valibot), then the fields the command needs, each refused with a 400
 * in docs/api.md's words.
 */
export function validateRequest(command: Command) {
  return createMiddleware<ApiEnv>(async (c, next) => {
    const decoded = decodeRequest(await bodyText(c.req.raw));
    if (decoded.ok && decoded.request.node !== '')
      noteAccess(c.env, { node: decoded.request.node });
    if (!decoded.ok)
      throw refusal(
        'invalid_request',
        `this is not a request berth understands: ${decoded.message}`,
      );
    const missing = missingFields(command, decoded.request);
    if (missing) throw refusedAs(missing);
    c.set('request', decoded.request);
    await next();
  });
}

/** The body as UTF-8 text, strictly: a body that is not, or did not arrive whole, is refused. */
async function bodyText(request: Request): Promise<string> {
  let bytes: ArrayBuffer;
  try {
    bytes = await request.arrayBuffer();
  } catch {
    // The client went away, or was cut at the request deadline: no one hears the answer.
    throw refusal(
      'invalid_request',
      'this is not a request berth understands: the body did not arrive whole',
    );
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refusal(
      'invalid_request',
      'this is not a request berth understands: the body is not UTF-8 text',
    );
  }
}
