import { type CommandShape, commandLineOnly, commands, type Option } from '../commands/table.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { type Flags, textOf, textsOf } from './flags.ts';
import type { Io } from './io.ts';
import { parseLockTimeout } from './lock-wait.ts';
import { runPlan, runTableCommand } from './table-command.ts';

/** What a command's run is given: its words as typed, the options cac parsed, where the state is. */
export interface Given {
  words: readonly (string | undefined)[];
  flags: Flags;
  location: () => StateLocation;
  io: Io;
}

/** What a word on the command line stands for, so that completion can list its candidates. */
export type WordKind = 'node' | 'target' | 'module' | 'shell' | 'command' | 'file';

/** One command of the command line: its usage and options as help shows them, and its run. */
export interface LineCommand {
  usage: string;
  summary: string;
  /** What each of its words stands for, in order. */
  words: readonly WordKind[];
  /** `--to <url>` (a value) or `--check` (a flag), its help, and a default value. */
  options?: readonly (readonly [usage: string, help: string, fallback?: string])[];
  run(given: Given): Promise<number>;
}

/** berth's own options, of every command. */
export const GLOBAL_OPTIONS: readonly (readonly [usage: string, help: string])[] = [
  [
    '--state <dir>',
    'The state directory (default: $BERTH_STATE, else $XDG_STATE_HOME/berth, else ~/.local/state/berth)',
  ],
  ['--json', 'Print what the API would answer, as JSON'],
  [
    '--lock-timeout <duration>',
    "How long to wait for a node's lock before giving up: 500ms, 10s, 2m (default: 10s)",
  ],
];

const OPTION_HELP: Record<Option, readonly [string, string]> = {
  yes: ['--yes', 'Act, rather than preview (at a terminal without --digest: preview, then ask)'],
  digest: ['--digest <digest>', 'The digest of the preview to act on'],
  filter: ['--filter <module>', 'Converge this module alone'],
  mint: ['--mint <secret>', 'Let a take mint this secret over found data (repeatable)'],
  rotate: [
    '--rotate <secret>',
    'Rotate this key secret: the preview mints the new key and names its kid (repeatable)',
  ],
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
};

/** The table's commands: `<node> <module>` as each needs, its options, the act runner. */
function fromTable(command: CommandShape): LineCommand {
  const args = command.needs.map((field) => `<${field}>`).join(' ');
  return {
    usage: `${command.name} ${args}`,
    summary: command.summary,
    // A node's word takes a target too (`@web`).
    words: command.needs.map((field) => (field === 'node' ? 'target' : field)),
    options: command.options.map((option) => OPTION_HELP[option]),
    run: ({ words, flags, location, io }) => runTableCommand(command, words, flags, location(), io),
  };
}

/** A command's name: the first word of its usage. */
export const nameOf = (command: LineCommand) => command.usage.split(' ')[0] as string;

const json = (flags: Flags) => Boolean(flags.json);

/** Every command but `help` (which shows these), in the order help lists them. */
export const LINE_COMMANDS: readonly LineCommand[] = [
  ...[...commands, ...commandLineOnly].map(fromTable),
  {
    usage: 'act <file>',
    words: ['file'],
    summary: 'Act on a plan file that take or converge --out wrote, if nothing it covers changed',
    options: [OPTION_HELP.parallel, OPTION_HELP.batch],
    run: ({ words, flags, location, io }) => runPlan(words[0], flags, location(), io),
  },
  {
    usage: 'api',
    words: [],
    summary: 'Serve the Command API over HTTP',
    options: [
      ['--listen <address>', 'host:port to listen on', '127.0.0.1:8081'],
      [
        '--issuer <url>',
        'The OAuth 2.0 issuer whose tokens are accepted (required): its URL, or MODULE@NODE for the issuer a module provides there',
      ],
      ['--audience <audience>', 'The audience a token must carry', 'berth'],
      [
        '--issuer-ca <file>',
        "A CA certificate (PEM) to trust for the issuer, besides the system's and the state's CA (repeatable)",
      ],
    ],
    run: async ({ flags, location, io }) => {
      const listen = textOf(flags, 'listen') ?? '127.0.0.1:8081';
      const issuer = textOf(flags, 'issuer') ?? '';
      const audience = textOf(flags, 'audience') ?? 'berth';
      const issuerCa = textsOf(flags, 'issuerCa');
      const lockWaitMs = parseLockTimeout(textOf(flags, 'lockTimeout'));
      const { runApi } = await import('./api.ts');
      return runApi({ listen, issuer, audience, issuerCa, lockWaitMs }, location(), io);
    },
  },
  {
    usage: 'view',
    words: [],
    summary: 'Serve the fleet, its nodes and the journal in a browser, on loopback; it never acts',
    options: [
      [
        '--listen <address>',
        'host:port to listen on: 127.0.0.1, ::1 or localhost',
        '127.0.0.1:8082',
      ],
    ],
    run: async ({ flags, location, io }) => {
      const lockWaitMs = parseLockTimeout(textOf(flags, 'lockTimeout'));
      const listen = textOf(flags, 'listen') ?? '127.0.0.1:8082';
      const { runView } = await import('./view.ts');
      return runView({ listen, state: textOf(flags, 'state'), lockWaitMs }, location(), io);
    },
  },
  {
    usage: 'status [node]',
    words: ['target'],
    summary:
      'Show what each node (or each of a target, like @web) is to run, what berth manages, and its account',
    options: [['--check', 'Run the check of each module berth manages on the node, and show it']],
    run: async ({ words, flags, location, io }) => {
      const lockWaitMs = parseLockTimeout(textOf(flags, 'lockTimeout'));
      const { showStatus } = await import('./reading.ts');
      return showStatus(words[0], location(), json(flags), io, Boolean(flags.check), lockWaitMs);
    },
  },
  {
    usage: 'log [target]',
    words: ['target'],
    summary: 'Show the journal of acts: of every node, or of a target (web1, @web)',
    options: [
      ['--since <duration>', 'The acts of the last 90s, 15m, 2h or 7d alone'],
      ['--tail <n>', 'The last n acts alone'],
    ],
    run: async ({ words, flags, location, io }) => {
      const { parseLogQuery, showLog } = await import('./log.ts');
      const asked = parseLogQuery(words[0], textOf(flags, 'since'), textOf(flags, 'tail'));
      return showLog(asked, location(), json(flags), io);
    },
  },
  {
    usage: 'rekey [node]',
    words: ['node'],
    summary: 'Seal every kept secret again to the recipients in berth.json',
    run: async ({ words, flags, location, io }) =>
      (await import('./vault-commands.ts')).runRekey(words[0], location(), json(flags), io),
  },
  {
    usage: 'secret <node> <module> <name>',
    words: ['node', 'module'],
    summary: 'Print a secret the vault keeps (journaled)',
    run: async ({ words, flags, location, io }) => {
      const given = words.filter((word) => word !== undefined);
      return (await import('./vault-commands.ts')).runSecret(given, location(), json(flags), io);
    },
  },
  {
    usage: 'ca',
    words: [],
    summary: "Print the state's CA certificate (PEM), making the CA if the state has none",
    run: async ({ flags, location, io }) =>
      (await import('./ca.ts')).runCa(location(), json(flags), io),
  },
  {
    usage: 'copy-state',
    words: [],
    summary: "Copy the state directory's records into an empty PostgreSQL store",
    options: [['--to <url>', 'The store: postgresql://USER@HOST[:PORT]/DATABASE (no password)']],
    run: async ({ flags, location, io }) =>
      (await import('./copy-state.ts')).runCopyState(
        textOf(flags, 'to'),
        location(),
        json(flags),
        io,
      ),
  },
  {
    usage: 'nodes [target]',
    words: ['target'],
    summary: 'Show the nodes of the inventory: kind, address, what each is to run',
    run: async ({ words, flags, location, io }) =>
      (await import('./inventory.ts')).showNodes(words[0], location(), json(flags), io),
  },
  {
    usage: 'modules [name]',
    words: ['module'],
    summary: 'Show the modules of the catalog, or one whole',
    run: async ({ words, flags, location, io }) =>
      (await import('./modules.ts')).showModules(words[0], location(), json(flags), io),
  },
  {
    usage: 'validate',
    words: [],
    summary: 'Check berth.json, every catalog definition and every template',
    run: async ({ flags, location, io }) =>
      (await import('./validate.ts')).runValidate(location(), json(flags), io),
  },
  {
    usage: 'completion [shell]',
    words: ['shell'],
    summary: 'Print the completion script for bash, zsh or fish',
    run: async ({ words, io }) => (await import('./completion.ts')).printCompletion(words[0], io),
  },
  {
    usage: 'openapi',
    words: [],
    summary: "Print the Command API's OpenAPI 3.1 document",
    run: async ({ io }) => (await import('./openapi.ts')).printOpenApi(io),
  },
];
