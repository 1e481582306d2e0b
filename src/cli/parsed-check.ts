import type { CAC } from 'cac';
import { LINE_COMMANDS, nameOf } from './command-line.ts';
import { type HabitCommand, habitAnswer } from './habits.ts';
import type { UsageRefusal } from './usage-refusal.ts';

/**
 * berth's checks of what cac parsed, made before cac runs the command (whose own checks
 * would refuse in cac's English): an option the command does not have (`-v` among them,
 * the version being berth's alone), an option without its value, a word too many.
 */
export function refusalOf(cli: CAC, argv: readonly string[]): UsageRefusal | undefined {
  const command = cli.matchedCommand;
  if (!command && cli.args.length > 0) {
    const known = cli.commands.map((each) => each.name).filter((name) => name !== '');
    return { kind: 'no-command', typed: String(cli.args[0]), known };
  }
  const declared = command
    ? [...command.options, ...cli.globalCommand.options.filter((o) => o.name !== 'version')]
    : cli.globalCommand.options;
  const unknown = Object.keys(cli.options)
    .filter((name) => name !== '--' && !declared.some((option) => option.names.includes(name)))
    .map((name) => typedFlag(name, argv));
  if (unknown.length > 0) {
    const described = command && habitCommand(command.name);
    const known = declared.flatMap((option) =>
      option.rawName.split(/[\s,]+/).filter((word) => word.startsWith('--')),
    );
    const refusals = unknown.map(
      (option): UsageRefusal => ({ kind: 'unknown-option', command: described, option, known }),
    );
    // A flag another tool's users type is answered with berth's way first.
    return refusals.find((refusal) => isHabit(refusal)) ?? refusals[0];
  }
  for (const option of declared) {
    const values = [cli.options[option.name]].flat();
    if (option.required && values.some((value) => value !== undefined && typeof value !== 'string'))
      return { kind: 'needs-value', option: `--${longName(option.rawName)}` };
  }
  if (command && cli.args.length > command.args.length)
    return {
      kind: 'extra-word',
      command: command.name,
      takes: command.args.map((arg) => arg.value),
      word: String(cli.args[command.args.length]),
    };
  return undefined;
}

function isHabit(refusal: UsageRefusal): boolean {
  return (
    refusal.kind === 'unknown-option' &&
    refusal.command !== undefined &&
    habitAnswer(refusal.command, refusal.option) !== undefined
  );
}

/** What a habit's answer may point to: the command's target, module, preview. */
function habitCommand(name: string): HabitCommand {
  const line = LINE_COMMANDS.find((command) => nameOf(command) === name);
  return {
    name,
    takesTarget: line?.words[0] === 'target',
    takesModule: line?.words[1] === 'module',
    previews: line?.options?.some(([usage]) => usage === '--yes') ?? false,
    offers: (line?.options ?? []).map(([usage]) => usage.split(' ')[0] as string),
  };
}

function longName(rawName: string): string {
  return (rawName.split(/[\s,]+/).find((word) => word.startsWith('--')) ?? rawName).slice(2);
}

/** cac's name of an option as its word was typed: `fullDif` from `--full-dif`, `l` from `-l`. */
function typedFlag(name: string, argv: readonly string[]): string {
  const end = argv.indexOf('--');
  for (const word of end === -1 ? argv : argv.slice(0, end)) {
    const flag = word.split('=')[0] as string;
    if (flag.startsWith('--')) {
      const bare = flag.slice(2).replace(/^no-/, '');
      if (camelcase(bare) === name) return flag;
    } else if (name.length === 1 && flag.startsWith('-') && flag.slice(1).includes(name))
      return flag;
  }
  return name.length > 1 ? `--${name}` : `-${name}`;
}

/** cac's camel-casing of a flag's name. */
function camelcase(name: string): string {
  return name.replaceAll(/([a-z])-([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase());
}
