// One act's writes as berth makes them, in loops at once, with nothing else: the file
// system's own cost of an act, for the API acts to be weighed against. Prints acts/s.
// Done the cheapest way Node allows, as berth does them: the calls that wait on the disk
// (fsync) go to the thread pool, the rest (open, write, rename, close) are made in place.
//
// With `lock`, each act also makes and removes a lock file beside the record, as berth's
// lock does: what a lock kept in the file system costs, whatever else berth does.
//
//   node --import tsx scripts/bench/write-pattern.ts <dir> <loops> <seconds> [lock]
import { closeSync, fsync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const sync = promisify(fsync);
const [base = '', loops = '16', seconds = '3', lock] = process.argv.slice(2);
const record = `${JSON.stringify({ assigned: ['extra'], managed: {} }, null, 1)}\n`;
const line = `${JSON.stringify({ at: new Date().toISOString(), actor: 'bench', via: 'api', act: 'assign', node: 'n0', module: 'extra', outcome: 'done', said: 'n0 is assigned extra' })}\n`;

const holder = JSON.stringify({ pid: process.pid, host: 'bench', act: 'assign', node: 'n0' });

/** A record replaced atomically (temporary file, fsync, rename, directory fsync), a journal line made durable. */
async function writePattern(dir: string) {
  if (lock) {
    const taken = openSync(join(dir, 'lock'), 'wx', 0o600);
    writeSync(taken, holder);
    closeSync(taken);
  }
  const temporary = join(dir, `.record.json.${Math.random().toString(16).slice(2, 14)}.tmp`);
  const file = openSync(temporary, 'wx', 0o600);
  writeSync(file, record);
  await sync(file);
  closeSync(file);
  renameSync(temporary, join(dir, 'record.json'));
  const directory = openSync(dir, 'r');
  await sync(directory);
  closeSync(directory);
  const journal = openSync(join(dir, 'journal.jsonl'), 'a', 0o600);
  writeSync(journal, line);
  await sync(journal);
  closeSync(journal);
  if (lock) unlinkSync(join(dir, 'lock'));
}

const dirs = Array.from({ length: Number(loops) }, (_, i) => join(base, `n${i}`));
for (const dir of dirs) mkdirSync(dir, { recursive: true });
let acts = 0;
const until = performance.now() + Number(seconds) * 1000;
const started = performance.now();
await Promise.all(
  dirs.map(async (dir) => {
    while (performance.now() < until) {
      await writePattern(dir);
      acts++;
    }
  }),
);
process.stdout.write(`${acts / ((performance.now() - started) / 1000)}\n`);
