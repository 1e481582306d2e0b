/**
 * Graceful close under load, in the real `berth api` with real tokens from the loopback
 * issuer: 50 keep-alive clients send acts back to back (each its next as soon as its last
 * is answered), then SIGTERM. What the clients see must hold:
 *
 * - every act the journal holds was answered: no client is left without the answer to
 *   something berth did;
 * - no request sent once berth had taken the signal was carried out: it is answered 503
 *   with `Connection: close`, or its connection is closed unanswered;
 * - every answer berth wrote once it had taken the signal says `Connection: close`;
 * - berth exits 0.
 *
 * When berth "had taken the signal" is seen from the outside, never guessed by a delay:
 * a request written to the wire after a client has seen berth refuse a new connection
 * (its listener is closed in the signal's handler), or seen its 503, reached berth after
 * it took the signal. A request written between the kill and that moment may have been
 * read before the signal was (both wait in the same event loop), so it is held only to
 * the first rule. An answer was written after the signal was taken when its act was
 * journaled after that moment (the journal's `at` is taken before the answer is written).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { apiWorld } from '../helpers/api-world.ts';
import { journalLines, parseAnswer, SOAK, sleep } from '../helpers/reliability.ts';
import { until } from '../helpers/safety.ts';

const CLIENTS = 50;
const SHUTTING_DOWN =
  'berth api is shutting down: it takes no new request; send it again once berth api is back';
const RUNS = SOAK ? 3 : 1;

/** One request a client sent, and what came of it. */
interface Sent {
  act: 'assign' | 'unassign';
  module: string;
  sentAt: number;
  answer?: { status: number; headers: Record<string, string>; body: string; at: number };
}

/** The end of one whole answer at the start of `buffer` (Content-Length framed), or -1. */
function answerEnd(buffer: Buffer): number {
  const head = buffer.indexOf('\r\n\r\n');
  if (head < 0) return -1;
  const top = buffer.subarray(0, head).toString('latin1');
  const length = /\r\ncontent-length: *(\d+)/i.exec(top);
  assert.ok(length, `an answer without Content-Length: ${top}`);
  const end = head + 4 + Number(length[1]);
  return buffer.length >= end ? end : -1;
}

/**
 * A keep-alive client: assign box cC-K, then unassign it, K counting up, one request at
 * a time, each sent as soon as the last is answered, until berth closes the connection
 * or says `Connection: close`. Every other client writes each request in two pieces a
 * few milliseconds apart, as a slow network would, so that some requests are begun
 * before the signal and end after it. A request is sent when its last byte is.
 */
function client(c: number, port: number, token: string, sent: Sent[]) {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  let pending: Sent | undefined;
  let n = 0;
  const send = () => {
    const act = n % 2 === 0 ? 'assign' : 'unassign';
    const module = `c${c}-${Math.floor(n / 2)}`;
    n++;
    const json = JSON.stringify({ node: 'box', module });
    const request = `POST /${act} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    const one: Sent = { act, module, sentAt: Date.now() };
    pending = one;
    sent.push(one);
    if (c % 2 === 0) {
      socket.write(request);
      return;
    }
    const split = request.indexOf('Authorization');
    socket.write(request.slice(0, split));
    setTimeout(() => {
      one.sentAt = Date.now();
      socket.write(request.slice(split));
    }, 5);
  };
  socket.on('connect', send);
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    const end = answerEnd(buffer);
    if (end < 0) return;
    const answer = parseAnswer(buffer.subarray(0, end).toString('utf8'));
    buffer = buffer.subarray(end);
    assert.ok(pending, `an answer to no request: ${answer.raw}`);
    pending.answer = { ...answer, at: Date.now() };
    pending = undefined;
    if (answer.headers.connection?.toLowerCase() !== 'close') send();
  });
  return new Promise<void>((closed) => socket.on('close', () => closed()));
}

/** Connects again and again until berth refuses: the moment it is seen to have closed its listener. */
async function refusedAt(port: number): Promise<number> {
  for (;;) {
    const refused = await new Promise<boolean>((done) => {
      const probe = connect(port, '127.0.0.1');
      probe.on('connect', () => {
        probe.destroy();
        done(false);
      });
      probe.on('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
    });
    if (refused) return Date.now();
    await sleep(2);
  }
}

describe('berth api closing under load', () => {
  for (let run = 1; run <= RUNS; run++)
    it(`answers every act it journals, takes no new request after SIGTERM, and exits 0 (run ${run})`, async (t) => {
      const served = await apiWorld();
      const { api, world } = served;
      const journaledBefore = (await journalLines(world.state)).length;
      const sent: Sent[] = [];
      try {
        const tokens = await Promise.all(
          Array.from({ length: CLIENTS }, (_, c) => served.token(`client-${c}`)),
        );
        const clients = tokens.map((token, c) => client(c, api.port, token, sent));
        // Load until the clients have had two answers each (the keys fetched, the lock
        // contended), and the acts go on past that: the signal comes amid the load.
        const done = () => sent.filter((one) => one.answer?.status === 200).length;
        await until(() => done() >= 2 * CLIENTS, 'two acts done a client');
        await until(() => done() >= 2 * CLIENTS + CLIENTS / 2, 'the acts going on');

        const signalledAt = Date.now();
        api.child.kill('SIGTERM');
        const exited = api.exited.then((exit) => ({ ...exit, at: Date.now() }));
        const seenRefusing = await refusedAt(api.port);
        const exit = await exited;
        await Promise.all(clients);

        // (Only the close's own 503: one for a lock not had in 10 s would say nothing of it.)
        const firstRefusal = Math.min(
          seenRefusing,
          ...sent
            .filter((one) => one.answer?.status === 503 && one.answer.body.includes(SHUTTING_DOWN))
            .map((one) => one.answer?.at ?? 0),
        );
        const journal = (await journalLines(world.state)).slice(journaledBefore);
        const byKey = new Map(sent.map((one) => [`${one.act} ${one.module}`, one]));
        const unanswered = journal.filter(
          (entry) => byKey.get(`${entry.act} ${entry.module}`)?.answer === undefined,
        );
        const late = sent.filter((one) => one.sentAt >= firstRefusal);
        const answeredActs = sent.filter((one) => [200, 409].includes(one.answer?.status ?? 0));
        const refused503 = sent.filter((one) => one.answer?.status === 503);
        const closingActs = journal.filter((entry) => Date.parse(String(entry.at)) >= signalledAt);
        const closedAnswers = closingActs.filter(
          (entry) =>
            byKey.get(`${entry.act} ${entry.module}`)?.answer?.headers.connection === 'close',
        );
        t.diagnostic(
          `acts journaled ${journal.length}, answered ${answeredActs.length}; journaled but unanswered ${unanswered.length}; ` +
            `journaled after SIGTERM ${closingActs.length}, ${closedAnswers.length} of them answered with Connection: close; ` +
            `sent after berth was seen closing ${late.length}: ${late.filter((one) => one.answer?.status === 503).length} answered 503, ` +
            `${late.filter((one) => !one.answer).length} closed unanswered; 503s in all ${refused503.length}; ` +
            `seen closing ${firstRefusal - signalledAt} ms and exited ${exit.at - signalledAt} ms after SIGTERM`,
        );

        assert.deepEqual(
          unanswered.map((entry) => `${entry.act} ${entry.module} at ${entry.at}`),
          [],
          'acts journaled whose client never had the answer',
        );
        assert.equal(
          answeredActs.length,
          journal.length,
          'every act answered is journaled, and no other',
        );
        for (const one of late) {
          assert.ok(
            !journal.some((entry) => entry.act === one.act && entry.module === one.module),
            `${one.act} ${one.module}, sent ${one.sentAt - signalledAt} ms after SIGTERM, was carried out`,
          );
          if (one.answer) {
            assert.equal(one.answer.status, 503, one.answer.body);
            assert.equal(one.answer.headers['content-type'], 'application/json');
            assert.equal(one.answer.headers.connection, 'close');
            assert.deepEqual(JSON.parse(one.answer.body), {
              refused: SHUTTING_DOWN,
              code: 'shutting_down',
            });
          }
        }
        for (const entry of journal) {
          if (Date.parse(String(entry.at)) < firstRefusal) continue;
          const answer = byKey.get(`${entry.act} ${entry.module}`)?.answer;
          assert.equal(
            answer?.headers.connection,
            'close',
            `the answer to ${entry.act} ${entry.module}, journaled after SIGTERM, keeps the connection`,
          );
        }
        assert.equal(exit.code, 0, api.stderr());
        assert.doesNotMatch(api.stderr(), /unexpected/);
      } finally {
        await served.close();
      }
    });
});
