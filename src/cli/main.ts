import { type CAC, cac } from 'cac';
import * as v from 'valibot';
import packageJson from '../../package.json' with { type: 'json' };
import {
  GLOBAL_OPTIONS,
  LineOptionsSchema,
  OPTIONS,
  type OptionName,
} from '../commands/options.ts';
import { type AnswerName, type Entry, TABLE } from '../commands/table.ts';
import { locateState } from '../config/state-dir.ts';
import { exitOf } from '../model/codes.ts';
import { enveloped } from '../model/result.ts';
import { EXIT, type Io, processIo, UsageError } from './io.ts';
import type { Given, Program } from './program.ts';
import { PROGRAMS } from './programs.ts';
import { usageRefusal } from './usage-check.ts';
import { usageWords } from './usage-refusal.ts';

/**
 * The berth command line, made from the command table: cac parses it, as cac does; berth
 * checks what cac parsed from cac's own data and says what is wrong in its own words
 * (exit 2, with `--json` as the one envelope with code `usage`), reads each option with
 * its schema, and runs the matched command as its entry says. A failure berth did not
 * foresee ends here too, in words (unforeseen.ts).
 */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  let given: Given | undefined;
  let ran: Promise<number> | undefined;
  // cac runs the action of the command it matched: the command's program, as its entry says.
  const cli = berthCli((entry) => {
    if (given) ran = programOf(entry)(given);
  });
  try {
    cli.parse(['node', 'berth', ...argv], { run: false });
    if (cli.options.help || (cli.options.version && !cli.matchedCommand)) return EXIT.done;
    const refusal = usageRefusal(cli);
    if (refusal) throw new UsageError(usageWords(refusal));
    if (!cli.matchedCommand) {
      cli.outputHelp();
      return exitOf('usage');
    }
    const read = v.safeParse(LineOptionsSchema, cli.options);
    if (!read.success) throw new UsageError(read.issues[0].message);
    const options = read.output;
    given = {
      // mri keeps a word as text unless it follows a flag; usage-check.ts refused a number.
      words: [...(cli.args as string[]), ...((cli.options['--'] as string[] | undefined) ?? [])],
      options,
      location: () => locateState(options.state, io.env),
      io,
      help: (name) => help(cli, name),
    };
    cli.runMatchedCommand();
    return await (ran ?? Promise.resolve(EXIT.done));
  } catch (error) {
    // The one catch-all: anything nobody foresaw is said in words, not as a stack.
    if (!(error instanceof UsageError))
      return (await import('./unforeseen.ts')).unforeseen(error, cli.options.json === true, io);
    if (cli.options.json)
      io.out(JSON.stringify(enveloped({ refused: error.message, code: 'usage' })));
    else io.err(error.message);
    return exitOf('usage');
  }
}

/** How an entry runs: through the act runner, as a typed answer, or as the edge's program. */
function programOf(entry: Entry): Program {
  const { runs } = entry;
  if (runs === 'edge') return PROGRAMS[entry.name as keyof typeof PROGRAMS];
  if ('act' in runs)
    return async (given) => (await import('./table-command.ts')).runTableCommand(entry.name, given);
  return async (given) => (await import('./answers.ts')).runAnswer(entry.name as AnswerName, given);
}

/** cac made from the table: berth's global options, each command, help and version. */
function berthCli(run: (entry: Entry) => void): CAC {
  const cli = cac('berth');
  for (const name of GLOBAL_OPTIONS) cli.option(usageOf(name), OPTIONS[name].help);
  cli.help((sections) =>
    sections.map((section) =>
      section.title?.startsWith('For more info')
        ? { title: 'For more', body: '  $ berth help <command>' }
        : section,
    ),
  );
  cli.version(packageJson.version);
  for (const entry of TABLE as readonly Entry[]) {
    const words = entry.words.map((word) => (word.required ? `<${word.name}>` : `[${word.name}]`));
    const command = cli.command([entry.name, ...words].join(' '), entry.summary);
    for (const option of entry.options) {
      const [name, narrowed] = typeof option === 'string' ? [option, {}] : option;
      const fallback =
        narrowed.default ?? ('default' in OPTIONS[name] ? OPTIONS[name].default : undefined);
      command.option(
        usageOf(name),
        narrowed.help ?? OPTIONS[name].help,
        fallback === undefined ? undefined : { default: fallback },
      );
    }
    for (const example of entry.examples) command.example(example);
    // Required, as help says; but each command says itself what is missing, in the
    // API's words and with --json, so cac is not to refuse a missing one first.
    for (const arg of command.args) arg.required = false;
    command.action(() => run(entry));
  }
  return cli;
}

/** An option as help and cac write it: `--to <url>`, or `--yes`. */
function usageOf(name: OptionName): string {
  const option = OPTIONS[name];
  return 'value' in option ? `${option.flag} <${option.value}>` : option.flag;
}

/** `berth help [command]`: cac's help of every command, or of one. */
function help(cli: CAC, name: string | undefined): number {
  if (name === undefined) {
    cli.globalCommand.outputHelp();
    return EXIT.done;
  }
  const found = cli.commands.find((command) => command.name === name);
  if (!found) {
    const known = cli.commands.map((command) => command.name);
    throw new UsageError(usageWords({ kind: 'no-command', typed: name, known }));
  }
  found.outputHelp();
  return EXIT.done;
}
