// Acts per second through the file store alone: open the stores, run the command, close.
import type { CommandContext } from '../../src/commands/context.ts';
import { commands, runCommand } from '../../src/commands/table.ts';
import { machinesOf } from '../../src/machines/reach.ts';
import { openFileStores } from '../../src/stores/file-store.ts';

const [state = '', seconds = '2'] = process.argv.slice(2);
const byName = new Map(commands.map((command) => [command.name, command]));
const until = performance.now() + Number(seconds) * 1000;
const started = performance.now();
let acts = 0;
while (performance.now() < until) {
  const command = byName.get(acts % 2 === 0 ? 'assign' : 'unassign');
  if (!command) throw new Error('no assign or unassign in the command table');
  const stores = await openFileStores({ dir: state, createIfMissing: false });
  try {
    const context: CommandContext = {
      stores,
      reach: machinesOf(stores.settings),
      actor: 'bench',
      via: 'cli',
      now: () => new Date(),
      mint: [],
    };
    const outcome = await runCommand(command, { node: 'n0', module: 'extra', yes: false }, context);
    if (outcome.error !== undefined) throw new Error(outcome.error);
  } finally {
    await stores.close();
  }
  acts++;
}
process.stdout.write(`${acts / ((performance.now() - started) / 1000)}\n`);
