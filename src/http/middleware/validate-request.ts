import { createMiddleware } from 'hono/factory';
import { missingFields } from '../../commands/act.ts';
import type { CommandShape as Command } from '../../commands/command-shape.ts';
import { decodeRequest } from '../../request.ts';
import { noteAccess } from '../access-facts.ts';
import { type ApiEnv, answer } from '../answer.ts';
import { readBody } from '../read-body.ts';

/**
 * Steps 2 and 3: the body decoded as JSON into the request (valibot), then the fields
 * the command needs, each refused with a 400 in docs/api.md's words. A body over 64 KiB
 * is a 413.
 */
export function validateRequest(command: Command) {
  return createMiddleware<ApiEnv>(async (c, next) => {
    const body = await readBody(c.req.raw);
    if (!body.ok) {
      if ('tooLarge' in body)
        // The rest of the body is not wanted: closing the connection spares reading it.
        return answer(
          413,
          {
            refused: 'the request body is larger than berth reads (64 KiB)',
            code: 'body_too_large',
          },
          { Connection: 'close' },
        );
      return answer(400, {
        refused: `this is not a request berth understands: ${body.message}`,
        code: 'invalid_request',
      });
    }
    const decoded = decodeRequest(body.text);
    if (decoded.ok && decoded.request.node !== '')
      noteAccess(c.env, { node: decoded.request.node });
    if (!decoded.ok)
      return answer(400, {
        refused: `this is not a request berth understands: ${decoded.message}`,
        code: 'invalid_request',
      });
    const missing = missingFields(command, decoded.request);
    if (missing) return answer(400, { refused: missing, code: 'fields_missing' });
    c.set('request', decoded.request);
    await next();
  });
}
