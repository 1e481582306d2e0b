// The limit for Node on this machine: node:http answering what berth answers, no framework.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
const routes = new Set<string>(ROUTES);
// berth api's access log, line for line: the same bytes to the same sink (see answers.ts).
const log = accessLog(processIo.err);

const server = createServer((request, response) => {
  log.record(response);
  // The cheapest way found to send these bytes: end() sets Content-Length itself
  // (writeHead first would mean chunked, or a Content-Length header to validate).
  const send = (answer: Answer, body = answer.body) => {
    response.statusCode = answer.status;
    for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
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
