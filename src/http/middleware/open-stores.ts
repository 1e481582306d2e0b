import { createMiddleware } from 'hono/factory';
import { openAct } from '../../commands/act.ts';
import type { ActDeps } from '../../commands/act-shapes.ts';
import type { CommandShape as Command } from '../../commands/command-shape.ts';
import type { ApiEnv } from '../answer.ts';
import { refusedAs } from '../refusal.ts';

/**
 * Step 4: the stores opened for the request's node, through the same act runner the
 * command line uses. Stores that cannot be opened are a 503 with their words.
 */
export function openStores(
  command: Command,
  deps: ActDeps,
  face: { now?: () => Date; stopping?: AbortSignal },
) {
  return createMiddleware<ApiEnv>(async (c, next) => {
    const opened = await openAct(command, c.get('request'), deps, {
      actor: c.get('actor'),
      via: 'api',
      line: {},
      now: face.now,
      signal: face.stopping,
    });
    if (opened.kind !== 'ready') throw refusedAs(opened.refusal);
    c.set('act', opened);
    await next();
  });
}
