/**
 * The real `berth api`, believing the loopback issuer, sent bytes over raw sockets:
 * what a client sees when its request is not well framed HTTP/1.1, even with a valid
 * token. Every answer is JSON with `refused`, and berth never reaches its own
 * "unexpected" path for a client's bad bytes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { noRoute } from './helpers/api.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { rawExchange } from './helpers/reliability.ts';
import type { World } from './helpers/world.ts';

describe('berth api meeting bad framing in a body, with a valid token', () => {
  let served: ServedApiWorld;
  before(async () => {
    served = await apiWorld({ modules: { m: { description: 'a module' } } });
  });
  after(() => served?.close());

  it('answers a framing error in the body 400 in JSON, and never as unexpected', async () => {
    const token = await served.token();
    /** A POST /assign with the token, `headers` and then `body`, as bytes on the wire. */
    const assign = (headers: string, body: string) =>
      `POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;
    const chunked = (body: string, encoding = 'chunked') =>
      assign(`Transfer-Encoding: ${encoding}\r\n`, body);
    // Framing that Node's parser rejects only once the headers are in, and the route
    // (with a token that takes a moment to verify) is already reading the body.
    const framing: [string, string][] = [
      ['chunk size zz', chunked('zz\r\n{}\r\n0\r\n\r\n')],
      ['chunk size -1', chunked('-1\r\n{}\r\n0\r\n\r\n')],
      ['chunk size 0x2', chunked('0x2\r\n{}\r\n0\r\n\r\n')],
      ['chunk size +2', chunked('+2\r\n{}\r\n0\r\n\r\n')],
      ['chunk size 2 2', chunked('2 2\r\n{}\r\n0\r\n\r\n')],
      ['chunk size past 64 bits', chunked('fffffffffffffffffff\r\n{}\r\n0\r\n\r\n')],
      ['chunk size ended by LF alone', chunked('2\n{}\r\n0\r\n\r\n')],
      ['chunk size ended by CR alone', chunked('2\r{}\r\n0\r\n\r\n')],
      ['chunk data longer than its size', chunked('2\r\n{}X\r\n0\r\n\r\n')],
      ['chunk data shorter than its size', chunked('5\r\n{}\r\n0\r\n\r\n')],
      ['a control character in a chunk extension', chunked('2;\x01\r\n{}\r\n0\r\n\r\n')],
      ['an unclosed quote in a chunk extension', chunked('2;a="b\r\n{}\r\n0\r\n\r\n')],
      ['a trailer that is not a header', chunked('2\r\n{}\r\n0\r\nnot a header\r\n\r\n')],
      ['Transfer-Encoding: xchunked', chunked('2\r\n{}\r\n0\r\n\r\n', 'xchunked')],
      ['Transfer-Encoding: gzip', chunked('2\r\n{}\r\n0\r\n\r\n', 'gzip')],
      ['Transfer-Encoding: identity', chunked('2\r\n{}\r\n0\r\n\r\n', 'identity')],
      ['Transfer-Encoding: chunked;x', chunked('2\r\n{}\r\n0\r\n\r\n', 'chunked;x')],
      [
        'Transfer-Encoding given twice, chunked in neither',
        assign(
          'Transfer-Encoding: gzip\r\nTransfer-Encoding: xchunked\r\n',
          '2\r\n{}\r\n0\r\n\r\n',
        ),
      ],
    ];
    // The keys are fetched once a token is first seen; the vectors then meet a warm verifier.
    await rawExchange(served.port, assign('Content-Length: 2\r\n', '{}'));
    for (const [name, bytes] of framing) {
      const answer = await rawExchange(served.port, bytes);
      assert.equal(answer.status, 400, `${name}: ${answer.raw}`);
      assert.equal(answer.headers['content-type'], 'application/json', name);
      assert.match(
        JSON.parse(answer.body).refused,
        /^this is not a request berth understands: /,
        name,
      );
    }
    // A route still running after its connection is gone would say so before berth api
    // has closed and exited: everything it will ever say is said by then.
    const exit = await served.end();
    assert.equal(exit.code, 0, served.api.stderr());
    assert.doesNotMatch(served.api.stderr(), /unexpected/);
    assert.deepEqual(await served.world.journal(), [], 'nothing was carried out');
  });
});

describe('berth api over raw sockets, with a valid token', () => {
  let served: ServedApiWorld;
  let world: World;
  let token: string;
  let port: number;
  before(async () => {
    served = await apiWorld({ modules: { m: { description: 'a module' } } });
    ({ world, port } = served);
    token = await served.token();
  });
  after(() => served?.close());

  it('answers every request no route matches 404 naming its method and path, token or not, whatever Node makes of it', async () => {
    const long = `/${'x'.repeat(5_000)}`;
    const cases: [line: string, method: string, path: string][] = [
      ['OPTIONS * HTTP/1.1', 'OPTIONS', '*'],
      ['GET * HTTP/1.1', 'GET', '*'],
      ['PATCH /converge HTTP/1.1', 'PATCH', '/converge'],
      // Methods Node's parser does not know: it refuses them before any route could.
      ['FOO /assign HTTP/1.1', 'FOO', '/assign'],
      ['BREW / HTTP/1.1', 'BREW', '/'],
      ['post /assign HTTP/1.1', 'post', '/assign'],
      ['Post /take?x=1 HTTP/1.1', 'Post', '/take'],
      ['FOO http://127.0.0.1/adopt HTTP/1.1', 'FOO', '/adopt'],
      ['FOO /a/./b/../"c" HTTP/1.1', 'FOO', '/a/%22c%22'],
      // The path is named, cut short.
      [`FOO ${long} HTTP/1.1`, 'FOO', `/${'x'.repeat(99)}…`],
    ];
    for (const [line, method, path] of cases)
      for (const authorization of ['', `Authorization: Bearer ${token}\r\n`]) {
        const answer = await rawExchange(
          port,
          `${line}\r\nHost: 127.0.0.1\r\n${authorization}Content-Length: 2\r\n\r\n{}`,
        );
        const what = `${line.slice(0, 40)} ${authorization ? 'with' : 'without'} a token`;
        assert.equal(answer.status, 404, `${what}: ${answer.raw.slice(0, 300)}`);
        assert.equal(answer.headers['content-type'], 'application/json', what);
        assert.deepEqual(
          JSON.parse(answer.body),
          { refused: noRoute(method, path), code: 'no_route' },
          what,
        );
      }
    // Bytes that hold no request line are still not a request: 400.
    for (const bytes of [
      '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
      'FOO /a\x01b HTTP/1.1\r\n\r\n',
    ]) {
      const answer = await rawExchange(port, bytes);
      assert.equal(answer.status, 400, answer.raw);
      assert.match(JSON.parse(answer.body).refused, /^this is not a request berth understands: /);
    }
    assert.deepEqual(await world.journal(), [], 'nothing was carried out');
  });

  it('keeps a refusal of a body short: a long value is named by its kind, never repeated', async () => {
    const post = (json: string) =>
      rawExchange(
        port,
        `POST /assign HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
      );
    const understands = 'this is not a request berth understands: ';
    const quoted: [body: string, refused: string][] = [
      [JSON.stringify('x'.repeat(60_000)), 'expected an object, got a string'],
      [
        JSON.stringify({ node: 'box', module: 'm', yes: 'y'.repeat(60_000) }),
        'yes: expected true or false, got a string',
      ],
      [JSON.stringify('😀'.repeat(15_000)), 'expected an object, got a string'],
      [
        JSON.stringify({ node: 'box', yes: '"$&"' }),
        'yes: expected true or false, got the string "\\"$&\\""',
      ],
    ];
    for (const [body, refused] of quoted) {
      const answer = await post(body);
      assert.equal(answer.status, 400, answer.raw.slice(0, 300));
      assert.deepEqual(JSON.parse(answer.body), {
        refused: `${understands}${refused}`,
        code: 'invalid_request',
      });
    }
    // What JSON.parse says of a body that is not JSON, whatever its length.
    for (const body of [
      `{"node": ${'x'.repeat(60_000)}}`,
      `${'['.repeat(30_000)}`,
      `"${'z'.repeat(60_000)}`,
    ]) {
      const answer = await post(body);
      assert.equal(answer.status, 400, answer.raw.slice(0, 300));
      const { refused } = JSON.parse(answer.body);
      assert.ok(refused.startsWith(understands), refused.slice(0, 300));
      assert.ok(refused.length <= understands.length + 200, `${refused.length} characters`);
    }
  });

  it('answers an HTTP/1.1 request without Host, or any with two, 400 in JSON; HTTP/1.0 needs none', async () => {
    const json = '{"node":"box","module":"m"}';
    const request = (version: string, hosts: string[], authorization: string) =>
      `POST /assign HTTP/${version}\r\n${hosts.map((host) => `Host: ${host}\r\n`).join('')}${authorization}Content-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`;
    const refusals: [version: string, hosts: string[], refused: string][] = [
      ['1.1', [], 'an HTTP/1.1 request must name its Host'],
      ['1.1', ['127.0.0.1', 'elsewhere.example'], 'it names its Host more than once'],
      ['1.1', ['127.0.0.1', '127.0.0.1'], 'it names its Host more than once'],
      ['1.0', ['127.0.0.1', 'elsewhere.example'], 'it names its Host more than once'],
    ];
    for (const [version, hosts, refused] of refusals)
      for (const authorization of ['', `Authorization: Bearer ${token}\r\n`]) {
        const what = `HTTP/${version} with ${hosts.length} Host ${authorization ? 'and' : 'without'} a token`;
        const answer = await rawExchange(port, request(version, hosts, authorization));
        assert.equal(answer.status, 400, `${what}: ${answer.raw}`);
        assert.equal(answer.headers['content-type'], 'application/json', what);
        assert.equal(answer.headers.connection, 'close', what);
        assert.deepEqual(
          JSON.parse(answer.body),
          {
            refused: `this is not a request berth understands: ${refused}`,
            code: 'invalid_request',
          },
          what,
        );
      }
    // The Host is checked before anything else, so OPTIONS * without one is 400 too.
    const star = await rawExchange(port, 'OPTIONS * HTTP/1.1\r\n\r\n');
    assert.equal(star.status, 400, star.raw);
    assert.deepEqual(JSON.parse(star.body), {
      refused: 'this is not a request berth understands: an HTTP/1.1 request must name its Host',
      code: 'invalid_request',
    });
    assert.deepEqual(await world.journal(), [], 'nothing was carried out');

    const old = await rawExchange(port, request('1.0', [], `Authorization: Bearer ${token}\r\n`));
    assert.equal(old.status, 200, old.raw);
    assert.equal(JSON.parse(old.body).said, 'box is to run m');
  });
});
