// The shape berth api has, with nothing of berth's: a bare Hono app on @hono/node-server,
// each route's first middleware answering berth's 401, Hono's not-found its 404. The
// adapter's options are berth's (serve.ts), so a ratio weighs berth's own work.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { processIo } from '../../../src/cli/io.ts';
import { accessLog } from '../../../src/http/access-log.ts';
import {
  ACCEPT_TOKEN,
  type Answer,
  announce,
  answersFromEnv,
  NEEDS_MODULE,
  notFoundBody,
  ROUTES,
} from './answers.ts';

const answers = answersFromEnv();
const send = (answer: Answer, body = answer.body) =>
  new Response(body, { status: answer.status, headers: answer.headers });

const app = new Hono();
for (const route of ROUTES)
  app.post(
    route,
    async (c, next) => {
      if (c.req.header('authorization') !== `Bearer ${ACCEPT_TOKEN}`)
        return send(answers.unauthorized);
      await next();
    },
    async (c) => {
      JSON.parse(await c.req.text()); // decoded, as berth decodes it
      // The bench sends only requests that lack a field: berth's 400.
      return send(NEEDS_MODULE.has(route) ? answers.needsBoth : answers.needsNode);
    },
  );
app.notFound((c) => send(answers.notFound, notFoundBody(answers, c.req.method, c.req.path)));

const handler = getRequestListener(app.fetch, {
  hostname: '127.0.0.1',
  autoCleanupIncoming: false,
});
// berth api's access log, line for line: the same bytes to the same sink (see answers.ts).
const log = accessLog(processIo.err);
const server = createServer((request, response) => {
  log.record(response);
  handler(request, response);
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
