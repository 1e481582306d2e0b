import type { Context, Env, Handler } from 'hono';

/**
 * A step of a route's chain: Hono middleware (it answers, or calls `next` for the rest and
 * returns its promise), which may also answer at once, without a promise.
 */
export type Step<E extends Env> = (
  c: Context<E>,
  next: () => Promise<void>,
  // biome-ignore lint/suspicious/noConfusingVoidType: Hono's middleware resolves to void, not undefined
) => Response | void | Promise<Response | void>;

/**
 * Runs `steps` in order as one Hono handler. Hono composes a route's several handlers
 * through an async dispatch, so a refusal answered by the first step would still cost a
 * promise a step and the adapter's slower path; here a step that answers at once is
 * answered at once (the 401 without a token), and the rest is Hono's middleware as it is.
 */
export function chain<E extends Env>(...steps: Step<E>[]): Handler<E> {
  const run = (c: Context<E>, index: number): Response | Promise<Response> => {
    const step = steps[index];
    if (!step) throw new TypeError('the last step of a chain must answer');
    let answered: Response | undefined;
    const next = async () => {
      answered = await run(c, index + 1);
    };
    // biome-ignore lint/suspicious/noConfusingVoidType: what a Step resolves to, as Hono's middleware
    const settle = (response: Response | void): Response => {
      const final = response ?? answered;
      if (!final) throw new TypeError('a step of a chain neither answered nor went on');
      return final;
    };
    const out = step(c, next);
    return out instanceof Promise ? out.then(settle) : settle(out);
  };
  return (c) => run(c, 0);
}
