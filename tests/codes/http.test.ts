/**
 * The codes the Command API's server gives a request it does not carry to a command —
 * no token, no route, a body or headers too large, a body it cannot read — over a real
 * socket to a real `berth api`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpAsk } from '../helpers/api-process.ts';
import { type Body, codesSeen, type Faces, openFaces } from './faces.ts';

const codes = codesSeen('http');

describe("the server's own refusals", () => {
  let faces: Faces;
  before(async () => {
    faces = await openFaces({
      nodes: ['web1', 'web2'],
      settings: { groups: { web: ['web1', 'web2'] } },
    });
  });
  after(() => faces?.close());

  const send = async (options: Parameters<typeof httpAsk>[1], token = true) => {
    const headers = { 'Content-Type': 'application/json', ...options.headers };
    if (token) Object.assign(headers, { Authorization: `Bearer ${await faces.token('ops')}` });
    const answer = await httpAsk(faces.api.url, { ...options, headers });
    return { status: answer.status, body: (answer.body ?? {}) as Body };
  };

  it('unauthorized: no token, or one no issuer signed (401)', async () => {
    const none = await send({ path: '/converge', body: '{"node":"web1"}' }, false);
    assert.equal(none.status, 401);
    codes.refused('api node', none, 'unauthorized');
    const forged = await send(
      {
        path: '/converge',
        body: '{"node":"web1"}',
        headers: { Authorization: 'Bearer e30.e30.c2ln' },
      },
      false,
    );
    assert.equal(forged.status, 401);
    codes.refused('api node', forged, 'unauthorized');
  });

  it('no_route: a path or method the API has no route for (404)', async () => {
    const answer = await send({ path: '/status', body: '{"node":"web1"}' });
    assert.equal(answer.status, 404);
    codes.refused('api node', answer, 'no_route');
  });

  it('invalid_request: a body that is not JSON, or a field of the wrong type (400)', async () => {
    const notJson = await send({ path: '/converge', body: 'node=web1' });
    assert.equal(notJson.status, 400);
    codes.refused('api node', notJson, 'invalid_request');
    const group = await send({ path: '/converge', body: '{"node":"@web","yes":"yes"}' });
    assert.equal(group.status, 400);
    codes.refused('api group', group, 'invalid_request');
  });

  it('body_too_large: a body over 64 KiB (413)', async () => {
    const body = JSON.stringify({ node: 'web1', module: 'x'.repeat(70 * 1024) });
    const answer = await send({ path: '/assign', body });
    assert.equal(answer.status, 413);
    codes.refused('api node', answer, 'body_too_large');
  });

  it('headers_too_large: headers larger than berth reads (431)', async () => {
    const answer = await send({
      path: '/converge',
      body: '{"node":"web1"}',
      headers: { 'X-Padding': 'x'.repeat(64 * 1024) },
    });
    assert.equal(answer.status, 431);
    codes.refused('api node', answer, 'headers_too_large');
  });
});

codes.finally();
