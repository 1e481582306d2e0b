import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { routes } from '../commands/table.ts';
import { type Code, statusOf } from '../model/codes.ts';
import type { AccessLog } from './access-log.ts';
import { noRoute } from './no-route.ts';
import { refusedRequestLine } from './request-line.ts';

/** The Command API's limits (docs/api.md): headers within 10 s, a graceful close of at most 5 s. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const SHUTDOWN_GRACE_MS = 5_000;
/**
 * Within the grace: acts still running this long after the signal are told to stop (a
 * hook is ended, the act records what it did and is answered), and every connection
 * still open is closed at CLOSE_ALL_MS, so that berth has ended within the 5 s. The
 * second left between the two is for the stopped acts to write their records and answers.
 */
export const CUT_ACTS_MS = SHUTDOWN_GRACE_MS - 1_000;
export const CLOSE_ALL_MS = SHUTDOWN_GRACE_MS - 250;
/** The answer to a request that arrives once a server of berth's (`berth api`) has been told to stop. */
export function shuttingDown(name: string): string {
  return `${name} is shutting down: it takes no new request; send it again once ${name} is back`;
}
export const SHUTTING_DOWN = shuttingDown('berth api');
/**
 * A whole request (headers and body) must arrive within this; a stalled body is cut.
 * A command request is at most 64 KiB: 30 s allows a very slow link, and a stalled
 * body holds only its own connection meanwhile (the stores are opened after the body).
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Who serves, as what the app never sees is answered: the Command API's, unless another
 * server of berth's (`berth view`) says otherwise.
 */
export interface Served {
  /** Named in the words of a refusal: `berth api`. */
  name: string;
  /** A refusal given before the app, as its client reads it: JSON `{refused, code}` for the API. */
  answer(refused: string, code: Code): { type: string; body: string };
  /** The words of a request no route can take (CONNECT, `OPTIONS *`). */
  noRoute(method: string, path: string): string;
  /** At most this many connections at once; one more is closed as it comes, unanswered. */
  maxConnections?: number;
}

const API: Served = {
  name: 'berth api',
  answer: (refused, code) => ({
    type: 'application/json',
    body: JSON.stringify({ refused, code }),
  }),
  noRoute: noRoute(routes()),
};

export interface Listening {
  /** The address served, as `http://host:port`. */
  url: string;
  /** Resolves once the server has closed, gracefully or at the deadline. */
  closed: Promise<void>;
  /**
   * Aborts 4 s into the close, so that acts still running stop, record what they did
   * and are answered before every connection is closed.
   */
  cut: AbortSignal;
}

/**
 * Serves a fetch handler on a Node socket until `signal` aborts, then closes
 * gracefully: no new connections, and no new request on a connection already open
 * (503, `Connection: close`); idle connections closed at once; every answer in flight
 * says `Connection: close`; requests in flight given until 4 s (then `cut`), and every
 * connection closed at 4.75 s, so that the close is over within the 5 s docs/api.md allows.
 *
 * Whatever never reaches the handler is still answered in words, as `as` writes a
 * refusal (the API's: JSON with `refused`):
 * a request Node cannot parse (400), headers too large (431), a request not in
 * within its deadline (408), a URL or Host that is not one (400), an HTTP/1.1 request
 * without Host or any with two (400), an Upgrade (400), and CONNECT, `OPTIONS *` or a
 * method Node does not know (404).
 *
 * Every request that is one reaches the app: its routes, authentication and 404 are the
 * app's alone. `log` has a line for every request. `as` caps the connections when it says.
 */
export function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  address: { hostname: string; port: number },
  signal: AbortSignal,
  { log, as = API }: { log?: AccessLog; as?: Served } = {},
): Promise<Listening> {
  const handler = getRequestListener(fetch, {
    hostname: address.hostname,
    // Node itself discards a body the app did not read once the answer is sent; the
    // adapter's own clean-up adds timers to every such request (a 401 costs 18 % more).
    autoCleanupIncoming: false,
    errorHandler: (error) =>
      refusalResponse(
        as,
        'invalid_request',
        `this is not a request berth understands: ${(error as Error).message ?? 'its URL cannot be read'}`,
      ),
  });
  const closing = closingState();
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    log?.record(response);
    if (closing.begun) return refuseWhileClosing(as, response);
    latestOn(request.socket, response);
    const unmade = noRequestOf(as, request);
    if (unmade) return answerDirectly(as, response, ...unmade);
    handler(request, response);
  };
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      // Node checks the two deadlines above only this often (30 s by default).
      connectionsCheckingInterval: 500,
      keepAliveTimeout: 5_000,
      // Node's answer to a missing Host has no body; the handler's says why, in JSON.
      requireHostHeader: false,
    },
    serve,
  );
  if (as.maxConnections !== undefined) server.maxConnections = as.maxConnections;
  server.on('connection', closing.track);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(as, error, socket),
  );
  // An Expect that is not 100-continue: Node would answer 417 with no body; berth
  // ignores the expectation and answers the request as docs/api.md says.
  server.on('checkExpectation', serve);
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    socket.write(
      rawAnswer(as, 'no_route', as.noRoute(request.method ?? 'CONNECT', request.url ?? '')),
    );
    socket.destroy();
  });
  // Node hands the bytes after an Upgrade request's headers to this event and never
  // to the handler, so such a request would wait for a body that cannot come.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {});
    const protocol = String(request.headers.upgrade ?? '').slice(0, 40);
    socket.write(
      rawAnswer(
        as,
        'invalid_request',
        `this is not a request berth understands: berth does not switch protocols (Upgrade: ${protocol})`,
      ),
    );
    socket.destroy();
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.hostname, () => {
      server.off('error', reject);
      const bound = server.address() as AddressInfo;
      const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      const cut = new AbortController();
      resolve({
        url: `http://${host}:${bound.port}`,
        closed: closeOn(as, server, signal, cut, closing),
        cut: cut.signal,
      });
    });
  });
}

/** The reason phrase of each status a raw answer written to a socket may have. */
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function rawAnswer(as: Served, code: Code, refused: string): string {
  const { type, body } = as.answer(refused, code);
  const status = statusOf(code);
  return [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}`,
    `Content-Type: ${type}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

function refusalResponse(as: Served, code: Code, refused: string): Response {
  const { type, body } = as.answer(refused, code);
  return new Response(body, { status: statusOf(code), headers: { 'Content-Type': type } });
}

/**
 * Node's own answers to what it cannot parse have no body; berth's say why.
 * As Node does, it answers only when no answer of the app's has begun on the socket.
 */
function answerClientError(as: Served, error: NodeJS.ErrnoException, socket: Duplex) {
  const answering = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (answering && !answering.writableFinished && answering.req?.complete) {
    // Bad bytes after a whole request that is being answered (pipelined garbage): that
    // request may be an act already under way, so its own answer is the one given.
    socket.on('error', () => {});
    answering.once('close', () => socket.destroy());
    return;
  }
  if (socket.writable && !answering?.headersSent && error.code !== 'ECONNRESET') {
    const asked =
      error.code === 'HPE_INVALID_METHOD'
        ? refusedRequestLine(
            (error as { rawPacket?: Buffer }).rawPacket,
            (error as { bytesParsed?: number }).bytesParsed,
          )
        : undefined;
    const [code, refused]: [Code, string] = asked
      ? ['no_route', as.noRoute(asked.method, asked.path)]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            'request_timeout',
            `the request did not arrive in time: headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s`,
          ]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? ['headers_too_large', 'the request headers are larger than berth reads']
          : [
              'invalid_request',
              `this is not a request berth understands: ${(error as { reason?: string }).reason ?? error.message}`,
            ];
    socket.write(rawAnswer(as, code, refused));
  }
  socket.destroy();
}

/** The answer latest begun on a connection: the one that is to say `Connection: close`. */
const LATEST = Symbol('berth.latestResponse');
type Tracked = Socket & { [LATEST]?: ServerResponse };

function latestOn(socket: Socket, response: ServerResponse) {
  (socket as Tracked)[LATEST] = response;
}

/**
 * Whether the close has begun, and the connections open, so that at the signal the
 * answer in flight on each is made to close it: its client then sends nothing more
 * there, and berth does not wait on the connection after its last answer. On a
 * connection with requests pipelined, only the latest answer closes it, so the answers
 * before it are all written first.
 */
function closingState() {
  const open = new Set<Socket>();
  const state = {
    begun: false,
    track(socket: Socket) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    },
    begin() {
      state.begun = true;
      for (const socket of open) {
        const latest = (socket as Tracked)[LATEST];
        if (latest && !latest.headersSent) latest.shouldKeepAlive = false;
      }
    },
  };
  return state;
}

/** Whether a header's name is Host, in any case: the usual spellings first, making no string. */
function isHost(name: string): boolean {
  return name === 'Host' || name === 'host' || (name.length === 4 && name.toLowerCase() === 'host');
}

/**
 * The answer to what the app cannot be handed as a Request, or undefined for every
 * request that can (all of them that are well framed). As Node's parser refuses bytes
 * that are not HTTP (clientError), this refuses a message RFC 9112 §3.2 does not frame:
 * an HTTP/1.1 request without its Host, or any with more than one, is 400 and its
 * connection closed (a Request keeps no HTTP version, and the adapter would make its URL
 * of the first Host); HTTP/1.0 came before Host, so a request without one is served. A
 * request-target of `*` (`OPTIONS * HTTP/1.1`) is no URL, so no Request can be made of
 * it: it is the 404 any other path is, as CONNECT's is.
 */
function noRequestOf(
  as: Served,
  request: IncomingMessage,
): [code: Code, refused: string, close: boolean] | undefined {
  const raw = request.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (isHost(raw[i] as string)) hosts++;
  if (hosts > 1)
    return [
      'invalid_request',
      'this is not a request berth understands: it names its Host more than once',
      true,
    ];
  if (hosts === 0 && request.httpVersion === '1.1')
    return [
      'invalid_request',
      'this is not a request berth understands: an HTTP/1.1 request must name its Host',
      true,
    ];
  if (request.url === '*') return ['no_route', as.noRoute(request.method ?? '', '*'), false];
  return undefined;
}

function answerDirectly(
  as: Served,
  response: ServerResponse,
  code: Code,
  refused: string,
  close: boolean,
) {
  const { type, body } = as.answer(refused, code);
  const status = statusOf(code);
  const headers: Record<string, string | number> = {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  };
  if (close) headers.Connection = 'close';
  response.writeHead(status, headers);
  response.end(body);
}

/**
 * A request that arrives once the close has begun (on a keep-alive connection that was
 * open at the signal) is not carried out: it is answered 503, and its connection closed.
 */
function refuseWhileClosing(as: Served, response: ServerResponse) {
  answerDirectly(as, response, 'shutting_down', shuttingDown(as.name), true);
}

function closeOn(
  as: Served,
  server: Server,
  signal: AbortSignal,
  cut: AbortController,
  closing: ReturnType<typeof closingState>,
): Promise<void> {
  return new Promise((resolve) => {
    const close = () => {
      closing.begin();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const stopActs = setTimeout(
        () =>
          cut.abort(
            `${as.name} closed before the act ended (${CUT_ACTS_MS / 1000} s after it was told to stop)`,
          ),
        CUT_ACTS_MS,
      );
      const deadline = setTimeout(() => server.closeAllConnections(), CLOSE_ALL_MS);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(stopActs);
        clearTimeout(deadline);
        resolve();
      });
      server.closeIdleConnections();
    };
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
  });
}
