import { cac } from 'cac';
import packageJson from '../../package.json' with { type: 'json' };
import { type CommandShape as Command, commandLineOnly, commands } from '../commands/table.ts';
import { locateState } from '../config/state-dir.ts';
import { didYouMean, withHint } from '../did-you-mean.ts';
import { EXAMPLES } from './examples.ts';
import { habitAnswer } from './habits.ts';
import { EXIT, type Io, processIo, UsageError } from './io.ts';
import { parseLockTimeout } from './lock-wait.ts';

type Flags = Record<string, unknown>;

const OPTION_HELP = {
  yes: ['--yes', 'Act, rather than preview (at a terminal without --digest: preview, then ask)'],
  digest: ['--digest <digest>', 'The digest of the preview to act on'],
  filter: ['--filter <module>', 'Converge this module alone'],
  mint: ['--mint <secret>', 'Let a take mint this secret over found data (repeatable)'],
  parallel: ['--parallel <n>', "A target's act: at most n nodes at once (default 10)"],
  batch: [
    '--batch <n>',
    "A target's act: n nodes at a time, beginning no further batch after one where a node failed",
  ],
  'detailed-exitcode': [
    '--detailed-exitcode',
    'On a preview, exit 0 when there is nothing to do, 2 when there is and nothing blocks it, 1 when a blocker stands',
  ],
  fullDiff: ['--full-diff', "Show each file's whole diff in a preview, not its first 40 lines"],
  out: [
    '--out <file>',
    'Write the preview to a plan file, to review and then act on with berth act',
  ],
  refresh: [
    '--refresh',
    "Before the preview, fetch the node's package lists anew (apt-get update): an act of its own, journaled",
  ],
} as const;

/**
 * The berth command line: the five commands from the table, `api`, the reading commands
 * and the operator's surface (help, completion, validate, openapi).
 */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  const cli = cac('berth');
  cli.option(
    '--state <dir>',
    'The state directory (default: $BERTH_STATE, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
    { type: [String] },
  );
  cli.option('--json', 'Print what the API would answer, as JSON');
  cli.option(
    '--lock-timeout <duration>',
    "How long to wait for a node's lock before giving up: 500ms, 10s, 2m (default: 10s)",
    { type: [String] },
  );
  let exit: Promise<number> | undefined;
  const location = () => locateState(optionValues(argv, 'state').at(-1), io.env);

  for (const command of [...commands, ...commandLineOnly]) {
    const args = command.needs.map((field) => `<${field}>`).join(' ');
    const entry = cli.command(`${command.name} ${args}`, command.summary);
    // Required, as the help says; but berth itself says what is missing, in the API's
    // words and with --json, so cac is not to refuse a missing one first.
    for (const arg of entry.args) arg.required = false;
    for (const option of command.options) {
      const [name, help] = OPTION_HELP[option];
      const flag =
        option === 'yes' ||
        option === 'detailed-exitcode' ||
        option === 'fullDiff' ||
        option === 'refresh';
      entry.option(name, help, flag ? undefined : { type: [String] });
    }
    entry.action((...given: unknown[]) => {
      exit = runTableCommand(command, given, argv, location(), io);
    });
  }

  const act = cli
    .command(
      'act <file>',
      'Act on a plan file that take or converge --out wrote, if nothing it covers changed',
    )
    .option('--parallel <n>', OPTION_HELP.parallel[1], { type: [String] })
    .option('--batch <n>', OPTION_HELP.batch[1], { type: [String] })
    .action((file: unknown, flags: Flags) => {
      exit = runPlan(wordOf(file), Boolean(flags.json), argv, location(), io);
    });
  // berth says that the file is missing, with --json too, as the table's commands do.
  for (const arg of act.args) arg.required = false;

  cli
    .command('api', 'Serve the Command API over HTTP')
    .option('--listen <address>', 'host:port to listen on', {
      default: '127.0.0.1:8081',
      type: [String],
    })
    .option('--issuer <url>', 'The OAuth 2.0 issuer whose tokens are accepted (required)', {
      type: [String],
    })
    .option('--audience <audience>', 'The audience a token must carry', {
      default: 'berth',
      type: [String],
    })
    .action(() => {
      exit = import('./api.ts').then(({ runApi }) =>
        runApi(
          {
            // As typed: through cac an empty or blank --issuer would arrive as "0".
            listen: optionValues(argv, 'listen').at(-1) ?? '127.0.0.1:8081',
            issuer: optionValues(argv, 'issuer').at(-1) ?? '',
            audience: optionValues(argv, 'audience').at(-1) ?? 'berth',
          },
          location(),
          io,
        ),
      );
    });

  cli
    .command(
      'status [node]',
      'Show what each node (or each of a target, like @web) is to run, what berth manages, and its account',
    )
    .option('--check', 'Run the check of each module berth manages on the node, and show it')
    .action((node: unknown, flags: Flags) => {
      exit = import('./reading.ts').then(({ showStatus }) =>
        showStatus(
          node === undefined ? undefined : String(node),
          location(),
          Boolean(flags.json),
          io,
          Boolean(flags.check),
          parseLockTimeout(optionValues(argv, 'lock-timeout').at(-1)),
        ),
      );
    });
  cli.command('log', 'Show the journal of acts').action((flags: Flags) => {
    exit = import('./reading.ts').then(({ showLog }) =>
      showLog(location(), Boolean(flags.json), io),
    );
  });

  cli
    .command('rekey [node]', 'Seal every kept secret again to the recipients in berth.json')
    .action((node: unknown, flags: Flags) => {
      exit = import('./vault-commands.ts').then(({ runRekey }) =>
        runRekey(
          node === undefined ? undefined : String(node),
          location(),
          Boolean(flags.json),
          io,
        ),
      );
    });
  cli
    .command('secret <node> <module> <name>', 'Print a secret the vault keeps (journaled)')
    .action((...given: unknown[]) => {
      const flags = given.at(-1) as Flags;
      const words = given
        .slice(0, -1)
        .filter((word) => word !== undefined)
        .map(String);
      exit = import('./vault-commands.ts').then(({ runSecret }) =>
        runSecret(words, location(), Boolean(flags.json), io),
      );
    });

  cli
    .command('copy-state', "Copy the state directory's records into an empty PostgreSQL store")
    .option('--to <url>', 'The store: postgresql://USER@HOST[:PORT]/DATABASE (no password)', {
      type: [String],
    })
    .action((flags: Flags) => {
      exit = import('./copy-state.ts').then(({ runCopyState }) =>
        runCopyState(optionValues(argv, 'to').at(-1), location(), Boolean(flags.json), io),
      );
    });

  cli
    .command(
      'nodes [target]',
      'Show the nodes of the inventory: kind, address, what each is to run',
    )
    .action((target: unknown, flags: Flags) => {
      exit = import('./inventory.ts').then(({ showNodes }) =>
        showNodes(wordOf(target), location(), Boolean(flags.json), io),
      );
    });
  cli
    .command('modules [name]', 'Show the modules of the catalog, or one whole')
    .action((name: unknown, flags: Flags) => {
      exit = import('./modules.ts').then(({ showModules }) =>
        showModules(wordOf(name), location(), Boolean(flags.json), io),
      );
    });
  cli
    .command('validate', 'Check berth.json, every catalog definition and every template')
    .action((flags: Flags) => {
      exit = import('./validate.ts').then(({ runValidate }) =>
        runValidate(location(), Boolean(flags.json), io),
      );
    });
  cli
    .command('completion [shell]', 'Print the completion script for bash, zsh or fish')
    .action((shell: unknown) => {
      exit = import('./completion.ts').then(({ printCompletion }) =>
        printCompletion(wordOf(shell), io),
      );
    });
  cli.command('openapi', "Print the Command API's OpenAPI 3.1 document").action(() => {
    exit = import('./openapi.ts').then(({ printOpenApi }) => printOpenApi(io));
  });
  cli
    .command('help [command]', 'Show the commands, or one command with examples')
    .action((name: unknown) => {
      if (name === undefined) {
        cli.globalCommand.outputHelp();
        return;
      }
      const wanted = String(name);
      const found = cli.commands.find((command) => command.name === wanted);
      if (!found) throw new UsageError(noCommand(wanted, cli.commands));
      found.outputHelp();
    });
  // An example or two a command, for `berth help <command>`.
  for (const command of cli.commands)
    for (const example of EXAMPLES[command.name] ?? []) command.example(example);

  cli.help((sections) =>
    sections.map((section) =>
      section.title?.startsWith('For more info')
        ? { title: 'For more', body: '  $ berth help <command>' }
        : section,
    ),
  );
  cli.version(packageJson.version);

  try {
    const parsed = cli.parse(['node', 'berth', ...argv], { run: false });
    // Before help and version: Terraform's -auto-approve would otherwise read as -v.
    const habit = cli.matchedCommand && habitOf(cli.matchedCommand, argv);
    if (habit) throw new UsageError(habit);
    if (parsed.options.help || parsed.options.version) return EXIT.done;
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) throw new UsageError(noCommand(String(cli.args[0]), cli.commands));
      const unknown = Object.keys(parsed.options).find(
        (name) => name !== '--' && !cli.globalCommand.hasOption(name),
      );
      if (unknown)
        throw new UsageError(noOption('berth', `--${unknown}`, cli.globalCommand.options));
      cli.outputHelp();
      return EXIT.usage;
    }
    await cli.runMatchedCommand();
    return await (exit ?? Promise.resolve(EXIT.done));
  } catch (error) {
    if (error instanceof UsageError || (error as Error).name === 'CACError') {
      const refused = inBerthsWords((error as Error).message, cli, argv);
      if (argv.includes('--json')) io.out(JSON.stringify({ refused }));
      else io.err(refused);
      return EXIT.usage;
    }
    throw error;
  }
}

type CacCommand = ReturnType<ReturnType<typeof cac>['command']>;

function wordOf(value: unknown): string | undefined {
  return value === undefined ? undefined : String(value);
}

/** A flag another tool's users type, answered with berth's way (see habits.ts), or undefined. */
function habitOf(command: CacCommand, argv: readonly string[]): string | undefined {
  const table = [...commands, ...commandLineOnly].find((entry) => entry.name === command.name);
  const described = {
    name: command.name,
    takesTarget: table !== undefined || command.name === 'status' || command.name === 'nodes',
    takesModule: table?.needs.includes('module') ?? false,
    previews: table?.options.includes('yes') ?? false,
  };
  return habitAnswer(
    described,
    argv,
    (flag) => command.hasOption(flag.replace(/^-+/, '')) !== undefined,
  );
}

function noCommand(typed: string, known: readonly CacCommand[]): string {
  const names = known.map((command) => command.name).filter((name) => name !== '');
  return withHint(
    `berth has no command ${JSON.stringify(typed)}`,
    didYouMean(typed, names),
    'see berth help',
  );
}

function noOption(where: string, typed: string, known: readonly { rawName: string }[]): string {
  const flags = known.flatMap((option) =>
    option.rawName.split(/[\s,]+/).filter((word) => word.startsWith('--')),
  );
  const help =
    where === 'berth' ? 'see berth help' : `see berth help ${where.slice('berth '.length)}`;
  return withHint(`${where} has no option ${typed}`, didYouMean(typed, flags), help);
}

/** cac's own refusals, said as berth says the rest: the command, the word, a likely meaning. */
function inBerthsWords(
  message: string,
  cli: ReturnType<typeof cac>,
  argv: readonly string[],
): string {
  const command = cli.matchedCommand;
  if (!command) return message;
  const where = `berth ${command.name}`;
  const option = /^Unknown option `(.+)`$/.exec(message);
  if (option)
    return noOption(where, asTyped(option[1] as string, argv), [
      ...command.options,
      ...cli.globalCommand.options,
    ]);
  if (message.startsWith('Unused args: ')) {
    const extra = cli.args[command.args.length];
    const takes = command.args.length
      ? `takes ${command.args.map((arg) => `[${arg.value}]`).join(' ')}`
      : 'takes no word';
    return `${where} ${takes}; ${JSON.stringify(String(extra))} is one word too many`;
  }
  return message;
}

/** cac names an unknown option camel-cased (`--fullDif`): the word as it was typed. */
function asTyped(reported: string, argv: readonly string[]): string {
  const camel = (word: string) =>
    word.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const typed = argv.map((word) => word.split('=')[0] as string);
  return typed.find((word) => word.startsWith('-') && camel(word) === camel(reported)) ?? reported;
}

function runTableCommand(
  command: Command,
  given: unknown[],
  argv: readonly string[],
  location: ReturnType<typeof locateState>,
  io: Io,
): Promise<number> {
  const flags = given[given.length - 1] as Flags;
  // After `--` every word is a name, even one that starts with "-": the command's
  // name rule, not the option parser, is what refuses it.
  const words = [
    ...given.slice(0, -1).filter((value) => value !== undefined),
    ...((flags['--'] as unknown[] | undefined) ?? []),
  ].map(String);
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
    digest: optionValues(argv, 'digest').at(-1),
    filter: optionValues(argv, 'filter').at(-1),
    // A target's act: fields of the request, as the API's `parallel` and `batch` are.
    parallel: countOption(argv, 'parallel'),
    batch: countOption(argv, 'batch'),
  };
  const mint = optionValues(argv, 'mint');
  const lockWaitMs = parseLockTimeout(optionValues(argv, 'lock-timeout').at(-1));
  const fullDiff = Boolean(flags.fullDiff);
  const refresh = Boolean(flags.refresh);
  const json = Boolean(flags.json);
  const detailedExitcode = Boolean(flags.detailedExitcode);
  const out = optionValues(argv, 'out').at(-1);
  if (out !== undefined && request.yes)
    throw new UsageError(
      `--out writes a preview's plan file, and --yes acts: preview with --out ${out}, then berth act ${out}`,
    );
  return import('./run-command.ts').then(({ runFromCli }) =>
    runFromCli(
      command,
      request,
      { location, mint, fullDiff, refresh, json, detailedExitcode, lockWaitMs, out },
      io,
    ),
  );
}

/**
 * `berth act FILE`: the take or converge of a plan file, with `--yes` and the plan's
 * digest, as its preview was asked (target, module or filter, `--mint`).
 */
function runPlan(
  file: string | undefined,
  json: boolean,
  argv: readonly string[],
  location: ReturnType<typeof locateState>,
  io: Io,
): Promise<number> {
  if (file === undefined)
    throw new UsageError(
      'berth act needs a plan file: one written by berth take or converge with --out FILE',
    );
  const parallel = countOption(argv, 'parallel');
  const batch = countOption(argv, 'batch');
  const lockWaitMs = parseLockTimeout(optionValues(argv, 'lock-timeout').at(-1));
  return import('./act-plan.ts').then(({ actOnPlan }) =>
    actOnPlan(file, { parallel, batch }, { location, json, lockWaitMs }, io),
  );
}

/** A count option (`--parallel 5`): a whole number from 1, or a usage error saying so. */
function countOption(argv: readonly string[], name: string): number | undefined {
  const value = optionValues(argv, name).at(-1);
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]{0,5}$/.test(value))
    throw new UsageError(`--${name} takes a whole number from 1, not ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * An option's values exactly as typed. cac (through mri) turns number-like values
 * into numbers, so `--filter 007` would reach the command as "7" and a digest of
 * digits would lose its leading zeros; names and digests are text, so they are
 * read from the words themselves. An option without a value is a usage error
 * rather than the text "true".
 */
function optionValues(argv: readonly string[], name: string): string[] {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  const values: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as string;
    if (word.startsWith(`--${name}=`)) values.push(word.slice(name.length + 3));
    else if (word === `--${name}`) {
      const next = words[index + 1];
      if (next === undefined || next.startsWith('-')) {
        throw new UsageError(`--${name} needs a value`);
      }
      values.push(next);
      index++;
    }
  }
  return values;
}
