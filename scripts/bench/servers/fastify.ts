// What a user might pick instead: the same five routes, the same answers, with Fastify.

import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
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
const app = Fastify({ logger: false, keepAliveTimeout: 5_000 });

const headers = (answer: Answer) => answer.headers;
// berth api's access log, line for line: the same bytes to the same sink (see answers.ts).
const log = accessLog(processIo.err);

app.addHook('onRequest', async (request, reply) => {
  log.record(reply.raw);
  if (request.routeOptions.url === undefined) return;
  if (request.headers.authorization !== `Bearer ${ACCEPT_TOKEN}`) {
    return reply
      .code(answers.unauthorized.status)
      .headers(headers(answers.unauthorized))
      .send(answers.unauthorized.body);
  }
});

for (const route of ROUTES) {
  app.post(route, async (_request, reply) => {
    // The bench sends only requests that lack a field: berth's 400.
    const answer = NEEDS_MODULE.has(route) ? answers.needsBoth : answers.needsNode;
    return reply.code(answer.status).headers(headers(answer)).send(answer.body);
  });
}

app.setNotFoundHandler((request, reply) => {
  const path = request.url.split('?')[0] as string;
  return reply
    .code(answers.notFound.status)
    .headers(headers(answers.notFound))
    .send(notFoundBody(answers, request.method, path));
});

await app.listen({ host: '127.0.0.1', port: 0 });
announce((app.server.address() as AddressInfo).port);
