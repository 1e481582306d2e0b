/**
 * Runs `berth status` (its function, in this process) over the state directory
 * argv[2], then prints whether the PostgreSQL driver was loaded meanwhile:
 * `{"code":0,"pg":false}`. For the test that a user of the file store never loads it.
 */
import { createRequire } from 'node:module';
import { showStatus } from '../../src/cli/reading.ts';

const io = { out: () => {}, err: () => {}, env: {} };
const code = await showStatus(
  undefined,
  { dir: process.argv[2] ?? '', createIfMissing: false },
  true,
  io,
);
const pg = Object.keys(createRequire(import.meta.url).cache).some((path) =>
  /node_modules[\\/]pg[\\/]/.test(path),
);
process.stdout.write(`${JSON.stringify({ code, pg })}\n`);
