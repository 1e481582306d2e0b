import type { ServerResponse } from 'node:http';
import { accessFactsOf } from './access-facts.ts';

/** The longest path or node name a line keeps: a request can name one of 60,000 characters. */
const KEPT = 200;

export interface AccessLog {
  /** Called as a request arrives: its line is written once its answer is done. */
  record(response: ServerResponse): void;
  /** Writes the lines still waiting: at the close, and as berth api exits. */
  flush(): void;
}

/** When an answer's request arrived, kept on the answer itself: no closure per request. */
const BEGAN = Symbol('berth.accessBegan');
type Timed = ServerResponse & { [BEGAN]: number };

/**
 * `berth api`'s access log: one JSON line a request — time, method, path (without its
 * query, where a careless client puts a token), status, subject, node, milliseconds. The
 * status is null when no answer was begun (the client went away, or the connection was
 * cut): Node's default of 200 would log an answer never given.
 * Lines are gathered and written once a turn of the event loop, so a burst of requests
 * costs one write, not one each.
 */
export function accessLog(write: (text: string) => void): AccessLog {
  let pending = '';
  const flush = () => {
    if (pending === '') return;
    const text = pending;
    pending = '';
    write(text);
  };
  function closed(this: Timed) {
    if (pending === '') setImmediate(flush);
    else pending += '\n';
    pending += lineOf(this, performance.now() - this[BEGAN]);
  }
  return {
    record(response) {
      (response as Timed)[BEGAN] = performance.now();
      response.on('close', closed);
    },
    flush,
  };
}

/**
 * The line, as JSON.stringify would write these fields in this order, made without an
 * object per line: only the strings a request chose are escaped.
 */
function lineOf(response: ServerResponse, ms: number): string {
  const request = response.req;
  const facts = accessFactsOf(request);
  const url = request.url ?? '';
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return `{"time":"${isoNow()}","method":${quoted(request.method)},"path":${quoted(kept(path))},"status":${response.headersSent ? response.statusCode : null},"subject":${quoted(facts?.subject)},"node":${quoted(kept(facts?.node))},"ms":${Math.round(ms * 10) / 10}}`;
}

function quoted(value: string | undefined): string {
  return value === undefined ? 'null' : JSON.stringify(value);
}

function kept(value: string | undefined): string | undefined {
  return value !== undefined && value.length > KEPT ? `${value.slice(0, KEPT)}…` : value;
}

let isoMs = Number.NaN;
let iso = '';
/** The time as ISO 8601, made once a millisecond: a busy server ends many answers in each. */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}
