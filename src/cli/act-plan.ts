import { commands } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { enveloped } from '../result.ts';
import { EXIT, type Io } from './io.ts';
import { readPlan } from './plan-file.ts';
import { runFromCli } from './run-command.ts';

/**
 * Acts on exactly the preview a plan file holds: the same take or converge, with `yes`
 * and its digest, so that the act is refused, naming each node and what changed, when
 * anything the preview covered changed since. A file that is not a plan is refused in
 * words before any store is opened.
 */
export async function actOnPlan(
  file: string,
  how: { parallel?: number; batch?: number },
  options: { location: StateLocation; json: boolean; lockWaitMs: number },
  io: Io,
): Promise<number> {
  const read = await readPlan(file);
  if (!read.ok) {
    if (options.json)
      io.out(JSON.stringify(enveloped({ refused: read.refused, code: 'invalid_plan' })));
    else io.err(read.refused);
    return EXIT.usage;
  }
  const { plan } = read;
  const command = commands.find((known) => known.name === plan.command);
  if (!command) throw new Error(`the plan's command ${plan.command} is not in the table`);
  return runFromCli(
    command,
    {
      node: plan.target,
      module: plan.command === 'take' ? plan.module : '',
      yes: true,
      digest: plan.digest,
      filter: plan.command === 'converge' ? plan.filter : undefined,
      parallel: how.parallel,
      batch: how.batch,
    },
    {
      location: options.location,
      mint: plan.command === 'take' ? plan.mint : [],
      fullDiff: false,
      json: options.json,
      detailedExitcode: false,
      lockWaitMs: options.lockWaitMs,
    },
    io,
  );
}
