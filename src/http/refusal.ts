import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type Code, statusOf } from '../model/codes.ts';
import type { Refusal } from '../model/refusal.ts';
import { refusalWords } from '../words/refusals.ts';
import { answer } from './answer.ts';

/**
 * A request refused before its command ran, thrown as Hono's HTTPException: the status is
 * its code's (src/model/codes.ts), the body `{refused, code}` and what `more` adds. The app's one
 * `onError` answers it.
 */
export function refusal(
  code: Code,
  refused: string,
  { more = {}, headers = {} }: { more?: object; headers?: Record<string, string> } = {},
): HTTPException {
  const status = statusOf(code) as ContentfulStatusCode;
  return new HTTPException(status, {
    res: answer(status, { refused, code, ...more }, headers),
  });
}

/** A command's refusal before it ran, typed: thrown as `refusal` is, in its words. */
export function refusedAs(refused: Refusal, options: { more?: object } = {}): HTTPException {
  return refusal(refused.code, refusalWords(refused), options);
}
