// The limit for Node on this machine: node:http answering what berth answers, no framework.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
const routes = new Set<string>(ROUTES);

const server = createServer((request, response) => {
  const send = (answer: Answer, body = answer.body) => {
    // Content-Length as berth sends it: without it, writeHead commits Node to chunked.
    response.writeHead(answer.status, {
      ...answer.headers,
      'Content-Length': Buffer.byteLength(body),
    });
    response.end(body);
  };
  const path = (request.url ?? '/').split('?')[0] as string;
  if (request.method !== 'POST' || !routes.has(path)) {
    send(answers.notFound, notFoundBody(answers, request.method ?? '', path));
    return;
  }
  if (request.headers.authorization !== `Bearer ${ACCEPT_TOKEN}`) {
    send(answers.unauthorized);
    return;
  }
  let text = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => {
    text += chunk;
  });
  request.on('end', () => {
    JSON.parse(text); // decoded, as berth decodes it
    // The bench sends only requests that lack a field: berth's 400.
    send(NEEDS_MODULE.has(path) ? answers.needsBoth : answers.needsNode);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
