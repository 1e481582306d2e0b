// One act's writes as berth makes them, in loops at once, with nothing else: the file
// system's own cost of an act, for the API acts to be weighed against. Prints acts/s.
//
//   node --import tsx scripts/bench/write-pattern.ts <dir> <loops> <seconds>
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';

const [base = '', loops = '16', seconds = '3'] = process.argv.slice(2);
const record = `${JSON.stringify({ assigned: ['extra'], managed: {} }, null, 1)}\n`;
const line = `${JSON.stringify({ at: new Date().toISOString(), actor: 'bench', via: 'api', act: 'assign', node: 'n0', module: 'extra', outcome: 'done', said: 'n0 is assigned extra' })}\n`;

/** A record replaced atomically (temporary file, fsync, rename, directory fsync), a journal line made durable. */
async function writePattern(dir: string) {
  const temporary = join(dir, `.record.json.${Math.random().toString(16).slice(2, 14)}.tmp`);
  const file = await open(temporary, 'wx', 0o600);
  await file.writeFile(record);
  await file.sync();
  await file.close();
  await rename(temporary, join(dir, 'record.json'));
  const directory = await open(dir, 'r');
  await directory.sync();
  await directory.close();
  const journal = await open(join(dir, 'journal.jsonl'), 'a', 0o600);
  await journal.appendFile(line);
  await journal.sync();
  await journal.close();
}

const dirs = Array.from({ length: Number(loops) }, (_, i) => join(base, `n${i}`));
for (const dir of dirs) await mkdir(dir, { recursive: true });
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
