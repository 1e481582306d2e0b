import { statusOf } from '../model/codes.ts';
import type { Authentication } from './authenticator.ts';

/** An answer as plain values, kept to make a Response of on every request. */
export interface PlainAnswer {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

type Refusal = Extract<Authentication, { ok: false }>;

// A refusal the authenticator keeps (no token at all, no identity provider) is put into
// words once, and answered from them on every request after.
const answers = new WeakMap<Refusal, PlainAnswer>();

/** The 401 for an authenticator's refusal: its words in JSON, and its RFC 6750 challenge. */
export function unauthorized(refusal: Refusal): PlainAnswer {
  let made = answers.get(refusal);
  if (!made) {
    made = {
      status: statusOf('unauthorized'),
      headers: { 'Content-Type': 'application/json', 'WWW-Authenticate': refusal.challenge },
      body: JSON.stringify({ refused: refusal.refused, code: 'unauthorized' }),
    };
    answers.set(refusal, made);
  }
  return made;
}
