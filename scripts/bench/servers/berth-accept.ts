// berth's own app and server, as `berth api` builds them (its access log on), with a test
// authenticator that accepts the bench's token: the 400 path then weighs berth's decoding
// against the baselines', not a token's signature check against their string comparison.
import { fileDeps } from '../../../src/cli/deps.ts';
import { processIo } from '../../../src/cli/io.ts';
import { routes } from '../../../src/commands/table.ts';
import { accessLog } from '../../../src/http/access-log.ts';
import { createApp } from '../../../src/http/app.ts';
import type { Authenticator } from '../../../src/http/authenticator.ts';
import { listen } from '../../../src/http/serve.ts';
import { ACCEPT_TOKEN, announce } from './answers.ts';

const state = process.env.BENCH_STATE ?? '';
const acceptBench: Authenticator = {
  authenticate: ({ authorization }) =>
    authorization === `Bearer ${ACCEPT_TOKEN}`
      ? { ok: true, subject: 'bench' }
      : { ok: false, refused: 'not the bench', challenge: 'Bearer realm="berth"' },
};
const app = createApp({
  routes: routes(),
  authenticator: acceptBench,
  ...fileDeps({ dir: state, createIfMissing: false }),
});
const served = await listen(
  app.fetch,
  { hostname: '127.0.0.1', port: 0 },
  new AbortController().signal,
  { log: accessLog(processIo.err) },
);
announce(Number(new URL(served.url).port));
