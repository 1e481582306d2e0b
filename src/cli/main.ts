import { type CAC, cac } from 'cac';
import packageJson from '../../package.json' with { type: 'json' };
import { locateState } from '../config/state-dir.ts';
import { enveloped } from '../result.ts';
import { asTyped, markedAsText } from './as-text.ts';
import { GLOBAL_OPTIONS, LINE_COMMANDS } from './command-line.ts';
import { EXAMPLES } from './examples.ts';
import { type Flags, textOf } from './flags.ts';
import { EXIT, type Io, processIo, UsageError } from './io.ts';
import { refusalOf } from './parsed-check.ts';
import { usageWords } from './usage-refusal.ts';

/**
 * The berth command line: the commands of the command table, `act`, `api`, the reading
 * commands and the operator's surface (help, completion, validate, openapi). cac parses
 * it; berth checks what cac parsed and says what is wrong in its own words.
 */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  const cli = berthCli();
  let exit: Promise<number> | undefined;
  for (const command of LINE_COMMANDS) {
    const entry = cli.command(command.usage, command.summary);
    for (const [usage, help, fallback] of command.options ?? [])
      entry.option(usage, help, fallback === undefined ? undefined : { default: fallback });
    entry.action((...given: unknown[]) => {
      const flags = given.at(-1) as Flags;
      const words = given.slice(0, -1) as (string | undefined)[];
      const location = () => locateState(textOf(flags, 'state'), io.env);
      exit = command.run({ words, flags, location, io });
    });
  }
  addHelp(cli);
  try {
    const parsed = parseAsTyped(cli, argv);
    if (parsed.help || (parsed.version && !cli.matchedCommand)) return EXIT.done;
    const refusal = refusalOf(cli, argv);
    if (refusal) throw new UsageError(usageWords(refusal));
    if (!cli.matchedCommand) {
      cli.outputHelp();
      return EXIT.usage;
    }
    await cli.runMatchedCommand();
    return await (exit ?? Promise.resolve(EXIT.done));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (cli.options.json)
      io.out(JSON.stringify(enveloped({ refused: error.message, code: 'usage' })));
    else io.err(error.message);
    return EXIT.usage;
  }
}

/** cac with berth's global options, help and version. */
function berthCli(): CAC {
  const cli = cac('berth');
  for (const [usage, help] of GLOBAL_OPTIONS) cli.option(usage, help);
  cli.help((sections) =>
    sections.map((section) =>
      section.title?.startsWith('For more info')
        ? { title: 'For more', body: '  $ berth help <command>' }
        : section,
    ),
  );
  cli.version(packageJson.version);
  return cli;
}

/** `berth help [command]`, and an example or two a command for it to show. */
function addHelp(cli: CAC): void {
  cli
    .command('help [command]', 'Show the commands, or one command with examples')
    .action((name: string | undefined) => {
      if (name === undefined) return cli.globalCommand.outputHelp();
      const found = cli.commands.find((command) => command.name === name);
      if (!found) {
        const known = cli.commands.map((command) => command.name);
        throw new UsageError(usageWords({ kind: 'no-command', typed: name, known }));
      }
      found.outputHelp();
    });
  for (const command of cli.commands) {
    // Required, as help says; but each command says itself what is missing, in the
    // API's words and with --json, so cac is not to refuse a missing one first.
    for (const arg of command.args) arg.required = false;
    for (const example of EXAMPLES[command.name] ?? []) command.example(example);
  }
}

/** cac's parse, run later, with every word and value as it was typed (see as-text.ts). */
function parseAsTyped(cli: CAC, argv: readonly string[]): Flags {
  cli.parse(['node', 'berth', ...markedAsText(argv)], { run: false });
  cli.args = cli.args.map(asTyped);
  cli.options = Object.fromEntries(
    Object.entries(cli.options).map(([name, value]) => [name, asTyped(value)]),
  );
  return cli.options;
}
