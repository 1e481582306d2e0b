/**
 * A TCP proxy on loopback that adds a fixed delay each way: this kernel has no netem,
 * so this is how the ssh tests and the bench meet a network with latency. Every chunk
 * is passed on `delayMs` after it arrived, in order, so a round trip through the proxy
 * takes at least 2 × delayMs more than without it.
 *
 *   const proxy = await startDelayProxy({ host: fleet.hosts[0].address, port: 22, delayMs: 25 });
 *   ssh -F CONFIG -o HostName=127.0.0.1 -o Port=PROXY.port alpha …   (HostKeyAlias keeps the key)
 */
import { connect, createServer, type Socket } from 'node:net';

export interface DelayProxy {
  /** Where to connect: 127.0.0.1 and this port. */
  host: string;
  port: number;
  delayMs: number;
  /** How many connections it has taken so far. */
  connections(): number;
  /** Stops listening and cuts every connection. */
  close(): Promise<void>;
}

export interface DelayProxyOptions {
  /** Where to forward to: an address of the fleet (or loopback). */
  host: string;
  port: number;
  /** Added to each direction. */
  delayMs: number;
  /** Where to listen: 127.0.0.1 unless said. */
  listenHost?: string;
}

/**
 * Passes what `from` sends on to `to`, each chunk `delayMs` later; its end (FIN) and its
 * abrupt close (reset, error) are passed on as late, after what came before them.
 */
function pipeDelayed(from: Socket, to: Socket, delayMs: number): void {
  const queue: { due: number; chunk: Buffer | 'end' | 'destroy' }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && (queue[0]?.due ?? Infinity) <= now) {
      const item = queue.shift();
      if (!item || to.destroyed) return;
      if (item.chunk === 'end') to.end();
      else if (item.chunk === 'destroy') to.destroy();
      else if (!to.write(item.chunk) && !from.isPaused()) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    }
    schedule();
  };
  const schedule = () => {
    const next = queue[0];
    if (timer || !next) return;
    timer = setTimeout(flush, Math.max(0, next.due - performance.now()));
  };
  const later = (chunk: Buffer | 'end' | 'destroy') => {
    queue.push({ due: performance.now() + delayMs, chunk });
    schedule();
  };
  from.on('data', (chunk: Buffer) => later(chunk));
  from.on('end', () => later('end'));
  from.on('close', () => {
    if (!from.readableEnded) later('destroy');
  });
}

export function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  let taken = 0;
  const server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, (client) => {
    taken++;
    const upstream = connect({ host: options.host, port: options.port, allowHalfOpen: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {}); // an error closes it: passed on as a late destroy
      socket.on('close', () => sockets.delete(socket));
    }
    upstream.once('connect', () => client.resume());
    pipeDelayed(client, upstream, options.delayMs);
    pipeDelayed(upstream, client, options.delayMs);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.listenHost ?? '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('the delay proxy has no port'));
        return;
      }
      resolve({
        host: address.address,
        port: address.port,
        delayMs: options.delayMs,
        connections: () => taken,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
