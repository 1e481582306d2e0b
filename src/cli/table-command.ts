import type { CommandShape as Command } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { type Flags, textOf, textsOf } from './flags.ts';
import { type Io, UsageError } from './io.ts';
import { parseLockTimeout } from './lock-wait.ts';

/** One of the table's commands, from its words and the options cac parsed. */
export function runTableCommand(
  command: Command,
  given: readonly (string | undefined)[],
  flags: Flags,
  location: StateLocation,
  io: Io,
): Promise<number> {
  // After `--` every word is a name, even one that starts with "-": the command's
  // name rule, not the option parser, is what refuses it.
  const words = [
    ...given.filter((value) => value !== undefined),
    ...((flags['--'] as string[] | undefined) ?? []),
  ];
  if (words.length > command.needs.length) {
    throw new UsageError(
      `berth ${command.name} takes ${command.needs.join(' and ')}; ${JSON.stringify(words[command.needs.length])} is one word too many`,
    );
  }
  const [node, module] = words;
  const request = {
    node: node ?? '',
    module: command.needs.includes('module') ? (module ?? '') : '',
    yes: Boolean(flags.yes),
    digest: textOf(flags, 'digest'),
    filter: textOf(flags, 'filter'),
    // A target's act: fields of the request, as the API's `parallel` and `batch` are.
    parallel: countOf(flags, 'parallel'),
    batch: countOf(flags, 'batch'),
  };
  const out = textOf(flags, 'out');
  if (out !== undefined && request.yes)
    throw new UsageError(
      `--out writes a preview's plan file, and --yes acts: preview with --out ${out}, then berth act ${out}`,
    );
  const options = {
    location,
    mint: textsOf(flags, 'mint'),
    rotate: textsOf(flags, 'rotate'),
    fullDiff: Boolean(flags.fullDiff),
    refresh: Boolean(flags.refresh),
    json: Boolean(flags.json),
    detailedExitcode: Boolean(flags.detailedExitcode),
    lockWaitMs: parseLockTimeout(textOf(flags, 'lockTimeout')),
    out,
  };
  return import('./run-command.ts').then(({ runFromCli }) =>
    runFromCli(command, request, options, io),
  );
}

/**
 * `berth act FILE`: the take or converge of a plan file, with `--yes` and the plan's
 * digest, as its preview was asked (target, module or filter, `--mint`).
 */
export function runPlan(
  file: string | undefined,
  flags: Flags,
  location: StateLocation,
  io: Io,
): Promise<number> {
  if (file === undefined)
    throw new UsageError(
      'berth act needs a plan file: one written by berth take or converge with --out FILE',
    );
  const how = { parallel: countOf(flags, 'parallel'), batch: countOf(flags, 'batch') };
  const lockWaitMs = parseLockTimeout(textOf(flags, 'lockTimeout'));
  return import('./act-plan.ts').then(({ actOnPlan }) =>
    actOnPlan(file, how, { location, json: Boolean(flags.json), lockWaitMs }, io),
  );
}

/** A count option (`--parallel 5`): a whole number from 1, or a usage error saying so. */
function countOf(flags: Flags, name: string): number | undefined {
  const value = textOf(flags, name);
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(value))
    throw new UsageError(`--${name} takes a whole number from 1, not ${JSON.stringify(value)}`);
  return Number(value);
}
