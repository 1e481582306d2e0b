/**
 * A Command API server for tests, in its own process: the real app, the real file
 * stores and the real listen(), with one difference from `berth api`: the test
 * authenticator accepts every request (the seed's own refuses them all), so that
 * requests reach the commands. Its signal handling is `berth api`'s (src/cli/api.ts).
 *
 *   node --import tsx tests/helpers/test-server.ts <state dir>
 *
 * It prints `serving http://127.0.0.1:<port>` once it listens, on a port of its own.
 */
import { createApp } from '../../src/http/app.ts';
import { listen } from '../../src/http/serve.ts';
import { machinesOf } from '../../src/machines/reach.ts';
import { openFileStores } from '../../src/stores/file-store.ts';
import { acceptAs } from './world.ts';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: test-server.ts <state dir>\n');
  process.exit(2);
}

const cutting = new AbortController();
const app = createApp({
  authenticator: acceptAs('tester'),
  openStores: () => openFileStores({ dir, createIfMissing: false }),
  machines: machinesOf,
  stopping: cutting.signal,
});
const stop = new AbortController();
const onSignal = () => stop.abort();
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
const served = await listen(app.fetch, { hostname: '127.0.0.1', port: 0 }, stop.signal);
served.cut.addEventListener('abort', () => cutting.abort(served.cut.reason));
process.stdout.write(`serving ${served.url}\n`);
await served.closed;
// As `berth api` does: an act cut at the deadline records what it did, then the process ends.
setTimeout(() => process.exit(0), 1_000).unref();
process.off('SIGINT', onSignal);
process.off('SIGTERM', onSignal);
