// Acts per second through the act runner and the file store alone: open, act, journal, close.

import { fileDeps } from '../../src/cli/deps.ts';
import { openAct } from '../../src/commands/act.ts';
import { shapeOf } from '../../src/commands/table.ts';
import { refusalWords } from '../../src/words/refusals.ts';

const [state = '', seconds = '2'] = process.argv.slice(2);
const deps = fileDeps({ dir: state, createIfMissing: false });
const until = performance.now() + Number(seconds) * 1000;
const started = performance.now();
let acts = 0;
while (performance.now() < until) {
  const command = shapeOf(acts % 2 === 0 ? 'assign' : 'unassign');
  const opened = await openAct(command, { node: 'n0', module: 'extra', yes: false }, deps, {
    actor: 'bench',
    via: 'cli',
    line: {},
  });
  if (opened.kind !== 'ready') throw new Error(refusalWords(opened.refusal));
  const outcome = await opened.run();
  if (outcome.refusal !== undefined) throw new Error(refusalWords(outcome.refusal));
  acts++;
}
process.stdout.write(`${acts / ((performance.now() - started) / 1000)}\n`);
