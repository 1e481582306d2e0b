/**
 * Bad input: a generated corpus (seeded, so every run sends the same bytes) of
 * malformed and huge JSON, wrong types, nulls, arrays, deep nesting, unicode and
 * control characters in names, path-like names, odd methods and paths, duplicate
 * and oversized headers, sent over real loopback sockets to a server that lets every
 * request past authentication. Every answer is one docs/api.md allows, JSON
 * with `refused`, never a 500 or a stack trace; the server is still up at the end and
 * its state is as it was: the journal grew by refusals only.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isName } from '../../src/model/names.ts';
import { decodeRequest } from '../../src/model/request.ts';
import { noRoute } from '../helpers/api.ts';
import {
  inProcessServer,
  journalLines,
  PLAIN,
  post,
  prng,
  rawExchange,
  SOAK,
  snapshot,
} from '../helpers/reliability.ts';
import { makeWorld, type World } from '../helpers/world.ts';

const COUNT = SOAK ? 60_000 : 10_000;
const PARALLEL = 8;
const ALLOWED = new Set([400, 404, 409, 413, 431]);
const ROUTES = ['/assign', '/unassign', '/take', '/converge', '/adopt'];

type Rng = ReturnType<typeof prng>;

const NAMES: unknown[] = [
  '',
  ' ',
  '../x',
  '/etc',
  '/etc/passwd',
  'a/b',
  '..',
  '.',
  'box/../box',
  '../../../../tmp/x',
  'BOX',
  'box\n',
  'box\r\nX-Injected: 1',
  'b\u0000x',
  '\u0000',
  '\u202ebox',
  'b\u200bx',
  'é',
  'bøx',
  '😀',
  '\ud800',
  'a'.repeat(64),
  '-box',
  'box ',
  '\t',
  '%2e%2e',
  '%2fetc',
  'C:\\Windows',
  '~root',
  '$(touch /tmp/berth-pwned)',
  '`id`',
  'box;rm -rf /',
  '*',
  'node_modules',
  '__proto__',
  'constructor',
  'box.json',
  'gitea.json',
  '\u001b[31mred',
  null,
  0,
  -1,
  1.5,
  true,
  false,
  [],
  ['box'],
  {},
  { node: 'box' },
];

function name(rng: Rng): unknown {
  const roll = rng.int(10);
  if (roll === 0) return 'a'.repeat(1 + rng.int(rng.int(2) ? 3000 : 60_000));
  if (roll === 1)
    return String.fromCharCode(...Array.from({ length: 1 + rng.int(20) }, () => rng.int(0x3000)));
  if (roll === 2)
    return String.fromCharCode(...Array.from({ length: 1 + rng.int(8) }, () => rng.int(32)));
  return rng.pick(NAMES);
}

function nested(rng: Rng, depth: number): string {
  const open = rng.pick(['[', '{"a":']);
  const close = open === '[' ? ']' : '}';
  const closed = rng.int(3) > 0;
  return open.repeat(depth) + (closed ? `1${close.repeat(depth)}` : '');
}

/** A body object for one of the routes, its fields drawn from the pools above. */
function bodyObject(rng: Rng): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (rng.int(8) > 0) body.node = rng.int(4) === 0 ? 'box' : name(rng);
  if (rng.int(3) > 0) body.module = name(rng);
  if (rng.int(3) === 0) body.yes = rng.pick([true, false, 'true', 1, null, [], 'yes']);
  if (rng.int(3) === 0)
    body.digest = rng.pick([
      'a'.repeat(64),
      '0'.repeat(63),
      'Z'.repeat(64),
      '',
      null,
      1,
      [],
      name(rng),
    ]);
  if (rng.int(4) === 0) body.filter = name(rng);
  if (rng.int(6) === 0)
    body[rng.pick(['__proto__', 'constructor', 'x', 'said', 'refused', ''])] = name(rng);
  return body;
}

const MALFORMED = [
  '',
  ' ',
  'null',
  '1',
  '"box"',
  'true',
  '[]',
  '[{"node":"box","module":"m0"}]',
  '{',
  '{"node":',
  '{"node":"box",}',
  "{'node':'box'}",
  '{"node":NaN}',
  '{"node":"box"} trailing',
  '{"node":"box"}{"node":"box"}',
  '/* comment */ {"node":"box"}',
  '\ufeff{"node":"x"}',
  '{"node":"\\x41"}',
  '{"node":"\\ud800"}',
  '{"node": 1e999}',
  '{"node":"box","module":"m0","yes":tru}',
];

/** The logical body: JSON text (or bytes that are not text at all). */
function body(rng: Rng): string | Buffer {
  const kind = rng.int(20);
  if (kind < 9) return JSON.stringify(bodyObject(rng));
  if (kind < 12) return rng.pick(MALFORMED);
  if (kind === 12) return nested(rng, 1 + rng.int(rng.int(2) ? 50 : 20_000));
  if (kind === 13) return `{"node":${nested(rng, 1 + rng.int(5000))},"module":"m0"}`;
  if (kind === 14)
    return Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0xaf, 0x22, 0x7d]);
  if (kind === 15) {
    const text = JSON.stringify(bodyObject(rng));
    return text.slice(0, rng.int(text.length));
  }
  if (kind === 16) return `{"node":"${'x'.repeat(64 * 1024 + rng.int(200_000))}"}`;
  if (kind === 17) return JSON.stringify(Array.from({ length: rng.int(5000) }, () => null));
  if (kind === 18)
    return JSON.stringify({ node: 'box', module: name(rng), pad: 'p'.repeat(rng.int(60_000)) });
  return Buffer.from(Array.from({ length: rng.int(300) }, () => rng.int(256)));
}

const METHODS = [
  'GET',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'PURGE',
  'FOO',
  'post',
  'P OST',
  'CONNECT',
  'HEAD',
];
const PATHS = [
  '/',
  '/assign/',
  '/ASSIGN',
  '/assign?node=box&module=m0',
  '/assign/../adopt',
  '/%2e%2e/etc/passwd',
  '//assign',
  '/assign%00',
  '/assign;x',
  '/take#frag',
  '*',
  'http://127.0.0.1/assign',
  'http://evil.example/adopt',
  '/\u00e9',
  '/../../etc/passwd',
  '/assign\\..\\adopt',
  `/${'a'.repeat(5000)}`,
  '/.well-known/openid-configuration',
];

/** One request on the wire, and whether its logical body would be an act that changes state. */
function request(rng: Rng): { bytes: Buffer; method: string; logical: string | Buffer } {
  let method = 'POST';
  let path = rng.pick(ROUTES);
  const odd = rng.int(10);
  if (odd === 0) method = rng.pick(METHODS);
  if (odd === 1) path = rng.pick(PATHS);
  let logical = body(rng);
  // Never a request that would change the state: the corpus is bad input, and the
  // state must be unchanged at the end. (A body naming box with good names would act.)
  if (typeof logical === 'string') logical = harmless(logical, path);
  const content = Buffer.isBuffer(logical) ? logical : Buffer.from(logical);

  const headers: string[] = [];
  const shape = rng.int(14);
  if (shape !== 0) headers.push('Host: 127.0.0.1');
  if (shape === 1) headers.push('Host: evil.example');
  if (shape === 2) headers.push('Host: a b');
  if (rng.int(3) > 0)
    headers.push(
      `Content-Type: ${rng.pick(['application/json', 'text/plain', 'application/json; charset=latin1', 'multipart/form-data; boundary=x'])}`,
    );
  if (shape === 3) headers.push('Content-Type: application/json', 'Content-Type: text/html');
  if (shape === 4) headers.push(`X-Big: ${'b'.repeat(17_000 + rng.int(20_000))}`);
  if (shape === 5) for (let i = 0; i < 500; i++) headers.push(`X-Many-${i}: ${i}`);
  if (shape === 6) headers.push('Authorization: Bearer', 'Authorization: Basic Zm9vOmJhcg==');
  if (shape === 7) headers.push('Expect: 100-continue');
  if (shape === 8) headers.push('Expect: teapot');
  if (shape === 9) headers.push('X-Bad\u0001: y');
  if (shape === 10) headers.push('X-Folded: a', ' continued');
  if (shape === 11) headers.push('Upgrade: websocket', 'Connection: Upgrade');
  if (shape === 12) headers.push(`Cookie: ${'c=1; '.repeat(rng.int(4000))}`);
  headers.push('Connection: close');

  const framing = rng.int(12);
  let payload: Buffer = content;
  if (framing === 0) {
    headers.push('Transfer-Encoding: chunked');
    payload = Buffer.concat([
      Buffer.from(`${content.length.toString(16)}\r\n`),
      content,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
  } else if (framing === 1) {
    headers.push('Transfer-Encoding: chunked');
    // Broken framing only: a chunk that never arrives is a slow client (slow-clients.test.ts).
    payload = Buffer.from(
      rng.pick(['zz\r\n', '5\r\nabcdefgh\r\n', '-1\r\n', '1ffffffffffffffff\r\n']),
    );
  } else if (framing === 2) {
    headers.push(`Content-Length: ${content.length}`, `Content-Length: ${content.length + 1}`);
  } else if (framing === 3) {
    headers.push(`Content-Length: ${rng.pick(['-1', 'abc', '1e3', '0x10', ''])}`);
  } else if (framing === 4) {
    // The server reads the prefix as the body, and the rest as a request of its own.
    const read = Math.max(0, content.length - 1 - rng.int(10));
    const prefix = content.subarray(0, read).toString('utf8');
    headers.push(`Content-Length: ${harmless(prefix, path) === prefix ? read : content.length}`);
  } else if (framing === 5) {
    headers.push('Content-Length: 99999999999');
    payload = content.subarray(0, 100);
  } else if (framing !== 6) {
    headers.push(`Content-Length: ${content.length}`);
  }
  const version =
    rng.int(40) === 0 ? rng.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', '']) : 'HTTP/1.1';
  const head = `${method} ${path} ${version}`.trimEnd();
  return {
    bytes: Buffer.concat([Buffer.from(`${head}\r\n${headers.join('\r\n')}\r\n\r\n`), payload]),
    method,
    logical,
  };
}

function harmless(text: string, path: string): string {
  const decoded = decodeRequest(text);
  if (!decoded.ok) return text;
  const { node, module, filter } = decoded.request;
  if (node !== 'box') return text;
  const route = ROUTES.find((route) => path.endsWith(route)) ?? '';
  const badModule = ['/assign', '/unassign', '/take'].some((r) => route === r) && !isName(module);
  const badFilter =
    route === '/converge' && filter !== undefined && filter !== '' && !isName(filter);
  if (badModule || badFilter) return text;
  return JSON.stringify({ ...JSON.parse(text), node: '../box' });
}

describe('a corpus of bad input over real sockets', () => {
  let world: World;
  let server: Awaited<ReturnType<typeof inProcessServer>>;
  const logged: string[] = [];
  const consoleError = console.error;
  before(async () => {
    world = await makeWorld({ m0: PLAIN });
    assert.equal((await world.berth('assign', 'box', 'm0')).code, 0);
    console.error = (...args: unknown[]) => {
      logged.push(args.map(String).join(' '));
    };
    server = await inProcessServer(world.state);
  });
  after(async () => {
    console.error = consoleError;
    await server.close();
    await world.cleanup();
  });

  it(`answers ${COUNT} generated requests with refusals only, and keeps its state`, async () => {
    const before = await snapshot(world.state);
    const journalBefore = (await journalLines(world.state)).length;
    const rng = prng(0xbe27);
    const corpus = Array.from({ length: COUNT }, () => request(rng));
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < corpus.length) {
        const index = next++;
        const item = corpus[index] as (typeof corpus)[number];
        const answer = await rawExchange(server.port, item.bytes, { head: item.method === 'HEAD' });
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const problem = check(answer, item.method);
        if (problem && problems.length < 20)
          problems.push(
            `#${index} ${problem}\n  sent: ${JSON.stringify(item.bytes.toString('utf8').slice(0, 300))}\n  got: ${JSON.stringify(answer.raw.slice(0, 300))}`,
          );
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const seconds = (Date.now() - started) / 1000;
    const summary = [...statuses]
      .sort()
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.log(`# ${COUNT} requests in ${seconds.toFixed(1)} s; ${summary}`);
    assert.deepEqual(problems, [], `statuses: ${summary}`);
    assert.deepEqual(logged, [], 'nothing unexpected was logged');

    // Still up, and still acting.
    const alive = await post(server.port, '/assign', JSON.stringify({ node: 'box', module: 'm0' }));
    assert.equal(alive.status, 200, alive.raw);
    assert.match(JSON.parse(alive.body).said, /already to run m0/);

    // The state is as it was: every file but the journal, byte for byte...
    const after = await snapshot(world.state);
    const journals = [...after.keys()].filter((path) => path.endsWith('journal.jsonl'));
    for (const path of journals) {
      before.delete(path);
      after.delete(path);
    }
    assert.deepEqual(after, before);
    assert.ok(journals.length > 0);
    // ...and the journal grew by refusals, each line whole.
    const lines = (await journalLines(world.state)).slice(journalBefore);
    const done = lines.filter((line) => line.outcome !== 'refused');
    assert.equal(done.length, 1, 'the one act done is the last, harmless, assign');
    for (const line of lines)
      assert.ok(Buffer.byteLength(JSON.stringify(line)) < 8_192, 'a journal line is kept short');
    assert.ok(!(await snapshot(join(world.state))).has('lock'), 'the lock is let go');
  });

  it('names an odd path in its 404 as the URL standard spells it', async () => {
    const spelled: [sent: string, named: string][] = [
      ['/x"y', '/x%22y'],
      ['/x{y}', '/x%7By%7D'],
      ['/x<y>`', '/x%3Cy%3E%60'],
      ['/a/./b/../c', '/a/c'],
      ['/%2e%2e/nope', '/nope'],
      ['/x%7Cy', '/x%7Cy'],
      ['/x|y;z:w@v', '/x|y;z:w@v'],
      ['//assign', '//assign'],
      ['/.well-known/x?access_token=t', '/.well-known/x'],
    ];
    for (const [sent, named] of spelled) {
      const answer = await rawExchange(
        server.port,
        `POST ${sent} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(answer.status, 404, `${sent}: ${answer.raw}`);
      assert.deepEqual(
        JSON.parse(answer.body),
        { refused: noRoute('POST', named), code: 'no_route' },
        sent,
      );
    }
  });
});

function check(
  answer: Awaited<ReturnType<typeof rawExchange>>,
  method: string,
): string | undefined {
  if (!ALLOWED.has(answer.status)) return `status ${answer.status}`;
  if (!/^application\/json/i.test(answer.headers['content-type'] ?? '')) return 'not JSON';
  if (/\bat .*\.(ts|js|mjs|cjs):\d+/.test(answer.raw)) return 'a stack trace';
  // An answer to HEAD from the app has no body; Node's parser errors do, as for any method.
  if (method === 'HEAD' && answer.body === '') return undefined;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return 'a body that is not JSON';
  }
  if (typeof parsed.refused !== 'string' || parsed.refused === '') return 'no refused';
  if (answer.status === 409 && typeof parsed.said !== 'string') return '409 without said';
  return undefined;
}
