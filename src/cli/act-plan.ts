import type { LineOptions } from '../commands/options.ts';
import { planDigest } from '../commands/plan-records.ts';
import { shapeOf } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { exitOf } from '../model/codes.ts';
import { enveloped } from '../model/result.ts';
import type { Io } from './io.ts';
import { contentOf, type PlanFile, readPlan } from './plan-file.ts';
import { runFromCli } from './run-command.ts';

/**
 * Acts on exactly the preview a plan file holds: the same take or converge, with `yes`
 * and its digest, so that the act is refused, naming each node and what changed, when
 * anything the preview covered changed since. A file that is not a plan is refused in
 * words before any store is opened; one edited since berth wrote it, made with another
 * state, or acted on already, by the runner under the nodes' locks (plan-records.ts).
 * What the plan says it will do is printed from the file before the act.
 */
export async function actOnPlan(
  file: string,
  options: LineOptions,
  location: StateLocation,
  io: Io,
): Promise<number> {
  const read = await readPlan(file);
  if (!read.ok) {
    if (options.json)
      io.out(JSON.stringify(enveloped({ refused: read.refused, code: 'invalid_plan' })));
    else io.err(read.refused);
    return exitOf('invalid_plan');
  }
  const { plan } = read;
  const command = shapeOf(plan.command);
  const asked = {
    digest: await planDigest(contentOf(read.read)),
    file,
    madeWith: plan.state,
    using: location.dir,
  };
  return runFromCli(
    command,
    {
      node: plan.target,
      module: plan.command === 'take' ? plan.module : '',
      yes: true,
      digest: plan.digest,
      filter: plan.command === 'converge' ? plan.filter : undefined,
      parallel: options.parallel,
      batch: options.batch,
    },
    {
      location,
      // What the plan was previewed with, beside how this act runs (`--parallel`, `--json`).
      options: {
        ...options,
        mint: plan.command === 'take' ? plan.mint : [],
        rotate: plan.command === 'converge' ? (plan.rotate ?? []) : [],
      },
      plan: { asked, words: planWords(file, plan) },
    },
    io,
  );
}

/** What the act will do, as the plan file says it: its command, when, and its preview's words. */
function planWords(file: string, plan: PlanFile): string {
  const what =
    plan.command === 'take'
      ? `take ${plan.target} ${plan.module}`
      : `converge ${plan.target}${plan.filter === undefined ? '' : ` --filter ${plan.filter}`}${(plan.rotate ?? []).map((name) => ` --rotate ${name}`).join('')}`;
  return `acting on ${file}: ${what}, as previewed at ${plan.previewed_at}:\n${plan.preview.said}\n`;
}
