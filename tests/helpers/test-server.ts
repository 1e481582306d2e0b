/**
 * A Command API server for tests, in its own process: `berth api`'s own serveApi
 * (the real app, file stores, listen() and signal handling) with one difference:
 * the test authenticator accepts every request, so that requests reach the commands.
 *
 *   node --import tsx tests/helpers/test-server.ts <state dir>
 *
 * It prints `serving http://127.0.0.1:<port>` once it listens, on a port of its own, and
 * `accepted` as each request on a route has passed authentication: a test then knows the
 * request has reached the app.
 */
import { serveApi } from '../../src/cli/api.ts';
import { processIo } from '../../src/cli/io.ts';
import { acceptAs } from './world.ts';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: test-server.ts <state dir>\n');
  process.exit(2);
}

const tester = acceptAs('tester');
process.exitCode = await serveApi({
  authenticator: {
    authenticate(presented) {
      processIo.out('accepted');
      return tester.authenticate(presented);
    },
  },
  issuer: 'no issuer: the test authenticator accepts every request',
  address: { hostname: '127.0.0.1', port: 0 },
  location: { dir, createIfMissing: false },
  io: processIo,
});
