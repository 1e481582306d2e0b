/**
 * Runs `berth status` (its function, in this process) over the state directory
 * argv[2], then prints the exit its answer has and whether the PostgreSQL driver was
 * loaded meanwhile: `{"code":0,"pg":false}`. For the test that a user of the file store
 * never loads it.
 */
import { createRequire } from 'node:module';
import { stateDeps } from '../../src/cli/deps.ts';
import { exitOfAnswer } from '../../src/cli/io.ts';
import { status } from '../../src/commands/status.ts';

const deps = stateDeps({ dir: process.argv[2] ?? '', createIfMissing: false }, {});
const answer = await status({ words: [], options: {} }, { ...deps, actor: 'tester' });
// A refusal is typed in the reading: its code is the refusal's.
const code = exitOfAnswer(
  'refusal' in answer ? answer.refusal.code : 'code' in answer ? answer.code : undefined,
);
const pg = Object.keys(createRequire(import.meta.url).cache).some((path) =>
  /node_modules[\\/]pg[\\/]/.test(path),
);
process.stdout.write(`${JSON.stringify({ code, pg })}\n`);
