import { shapeOf } from '../commands/table.ts';
import { UsageError } from './io.ts';
import type { Given } from './program.ts';

/**
 * One of the table's acts, from its words and its options: the request both faces have
 * (its words, and the options that are its fields), and the command line's own options.
 * After `--` every word is a name, even one that starts with "-": the command's name rule,
 * not the option parser, is what refuses it.
 */
export function runTableCommand(name: string, { words, options, location, io }: Given) {
  const command = shapeOf(name);
  const [node, module] = words;
  const request = {
    node: node ?? '',
    module: command.needs.includes('module') ? (module ?? '') : '',
    yes: options.yes ?? false,
    digest: options.digest,
    filter: options.filter,
    // A target's act: fields of the request, as the API's `parallel` and `batch` are.
    parallel: options.parallel,
    batch: options.batch,
  };
  if (options.out !== undefined && request.yes)
    throw new UsageError(
      `--out writes a preview's plan file, and --yes acts: preview with --out ${options.out}, then berth act ${options.out}`,
    );
  return import('./run-command.ts').then(({ runFromCli }) =>
    runFromCli(command, request, { location: location(), options }, io),
  );
}

/**
 * `berth act FILE`: the take or converge of a plan file, with `--yes` and the plan's
 * digest, as its preview was asked (target, module or filter, `--mint`).
 */
export function runPlan({ words, options, location, io }: Given): Promise<number> {
  const [file] = words;
  if (file === undefined)
    throw new UsageError(
      'berth act needs a plan file: one written by berth take or converge with --out FILE',
    );
  return import('./act-plan.ts').then(({ actOnPlan }) => actOnPlan(file, options, location(), io));
}
