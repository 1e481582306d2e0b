import type { CAC, Command } from 'cac';
import { OPTIONS } from '../commands/options.ts';
import { entryOf, optionNames } from '../commands/table.ts';
import { type HabitCommand, habitAnswer, ONE_DASH_HABITS } from './habits.ts';
import type { UsageRefusal } from './usage-refusal.ts';

/**
 * What cac parsed, checked before cac runs the command (whose own checks would refuse in
 * cac's English), from cac's own data: the command matched, the options it parsed
 * (`cli.options`, camel-cased, `false` for `--no-…`), the words (`cli.args`) and each
 * command's declared options and arguments. The checks are cac's own (an option the
 * command does not declare, a word too many), said as values that usage-refusal.ts puts
 * into berth's words; and one of berth's: a word mri read as a number.
 */
export function usageRefusal(cli: CAC): UsageRefusal | undefined {
  const command = cli.matchedCommand;
  if (!command && cli.args.length > 0) {
    const known = cli.commands.map((each) => each.name);
    return { kind: 'no-command', typed: String(cli.args[0]), known };
  }
  const unknown = unknownOptions(cli, command);
  if (unknown) return unknown;
  if (!command) return undefined;
  // mri reads a word after a flag (`--yes 007`) as a number; a name is text.
  const number = cli.args.find((word) => typeof word === 'number');
  if (number !== undefined) return { kind: 'number-word', command: command.name, number };
  // After `--` every word is a name (cac keeps them apart, as text): they count too.
  const words = [...cli.args, ...((cli.options['--'] as string[] | undefined) ?? [])];
  if (words.length > command.args.length)
    return {
      kind: 'extra-word',
      command: command.name,
      takes: command.args.map((arg) => arg.value),
      word: String(words[command.args.length]),
    };
  return undefined;
}

/** An option the command (or berth) does not declare, as it was most likely typed. */
function unknownOptions(cli: CAC, command: Command | undefined): UsageRefusal | undefined {
  // The version is berth's own: after a command, -v is an option that command has not.
  const declared = command
    ? [...command.options, ...cli.globalCommand.options.filter((o) => o.name !== 'version')]
    : cli.globalCommand.options;
  const isDeclared = (name: string) => declared.some((option) => option.names.includes(name));
  const names = Object.keys(cli.options).filter((name) => name !== '--' && !isDeclared(name));
  if (names.length === 0) return undefined;
  const described = command && habitCommand(command.name);
  const known = declared.map((option) => `--${kebab(option.name)}`);
  const refusal = (option: string): UsageRefusal => ({
    kind: 'unknown-option',
    command: described,
    option,
    known,
  });
  // mri reads `-auto-approve` letter by letter (`-a -u -t …`), all of them options the
  // command does not declare: a habit written with one dash is known by its letters, and
  // other letters are said as the one word they most likely were (`-xyz`).
  const letters = names.filter((name) => name.length === 1);
  const oneDash = ONE_DASH_HABITS.find(
    (habit) => habit.length > 2 && [...habit.slice(1)].every((letter) => letters.includes(letter)),
  );
  const typed = [
    ...(oneDash ? [oneDash] : letters.length > 1 ? [`-${letters.join('')}`] : []),
    ...names
      .filter((name) => name.length > 1 || letters.length === 1)
      .map((name) => typedAs(name, cli.options[name])),
  ];
  // A flag another tool's users type is answered with berth's way first.
  const habit = typed.find((option) => described && habitAnswer(described, option) !== undefined);
  return refusal(habit ?? (typed[0] as string));
}

/** An option as it was typed, from cac's name of it: `--full-dif` from `fullDif`, `-l` from `l`. */
function typedAs(name: string, value: unknown): string {
  if (name.length === 1) return `-${name}`;
  // mri turns `--no-thing` into `thing: false`; no other word gives an unknown option false.
  return value === false ? `--no-${kebab(name)}` : `--${kebab(name)}`;
}

/** A name as its flag spells it: cac camel-cases `--full-diff` to `fullDiff`. */
function kebab(name: string): string {
  return name.replaceAll(/([a-z])([A-Z])/g, (_, a: string, b: string) => `${a}-${b.toLowerCase()}`);
}

/** What a habit's answer may point to: the command's target, module, preview, own flags. */
function habitCommand(name: string): HabitCommand {
  const entry = entryOf(name);
  const own = entry ? optionNames(entry) : [];
  return {
    name,
    takesTarget: entry?.words[0]?.stands === 'target',
    takesModule: entry?.words[1]?.stands === 'module',
    previews: own.includes('yes'),
    offers: own.map((option) => OPTIONS[option].flag),
  };
}
