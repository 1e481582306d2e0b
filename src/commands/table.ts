import type { AnswerFunction, CommandShape, Route } from './command-shape.ts';
import type { CommandFunction } from './context.ts';
import type { OptionName } from './options.ts';

/**
 * The command table: every command of berth, once — its words and what each stands for,
 * its options (options.ts), its help and examples, and how it runs. The command line
 * (cli/main.ts), completion, help and the Command API's five routes are all made from
 * it; the `api` command serves the routes of this same table.
 *
 * It is part of the standards-only core, so a command runs in one of three ways:
 * - `act`: a command function run by the act runner, on either face (a `route` is the
 *   Command API's for it);
 * - `answer`: a function of the core that answers a typed value (a reading, `rekey`,
 *   `secret`), which the command line renders in words;
 * - `edge`: a program of the Node edge (it listens, reads files, or is the option parser's
 *   own help), supplied there by the command's name (cli/programs.ts), which the type
 *   checker holds complete.
 */

/** What a command's word stands for: what completion offers for it. */
export type WordKind = 'node' | 'target' | 'module' | 'secret' | 'shell' | 'command' | 'file';

export interface Word {
  /** Its name in usage (`<node>`), and for an act the request field it fills. */
  name: string;
  stands: WordKind;
  /** Shown `<required>`, else `[optional]`: each command says itself what is missing. */
  required?: true;
}

/** An option the command has, with its help or default narrowed for it (`--listen`). */
export type CommandOption = OptionName | readonly [OptionName, { help?: string; default?: string }];

export type Runs =
  | {
      act: Pick<CommandShape, 'recordsAlone' | 'changesNothing' | 'keepsSurvey'> & {
        run: CommandFunction;
        route?: `/${string}`;
      };
    }
  | { answer: AnswerFunction<unknown> }
  | 'edge';

export interface Entry {
  name: string;
  words: readonly Word[];
  summary: string;
  options: readonly CommandOption[];
  /** What `berth help <command>` shows under Examples, an operator's first lines. */
  examples: readonly string[];
  runs: Runs;
}

/** A node's word takes a target too (`@web`). */
const target: Word = { name: 'node', stands: 'target', required: true };
const module: Word = { name: 'module', stands: 'module', required: true };

export const TABLE = [
  {
    name: 'assign',
    words: [target, module],
    summary: 'Keep that a node is to run a module',
    options: [],
    examples: ['  $ berth assign web1 gitea'],
    runs: {
      act: { run: onFirstCall(async () => (await import('./assign.ts')).assign), route: '/assign' },
    },
  },
  {
    name: 'unassign',
    words: [target, module],
    summary: 'Drop that a node is to run a module (converge releases it; its data stays)',
    options: [],
    examples: ['  $ berth unassign web1 gitea'],
    runs: {
      act: {
        run: onFirstCall(async () => (await import('./unassign.ts')).unassign),
        route: '/unassign',
      },
    },
  },
  {
    name: 'take',
    words: [target, module],
    summary: 'Bring a module the machine already holds under berth: preview, then act',
    options: ['yes', 'digest', 'mint', 'fullDiff', 'detailedExitcode', 'out', 'parallel', 'batch'],
    examples: [
      '  $ berth take web1 gitea                       # preview: what would be taken',
      '  $ berth take web1 gitea --yes --digest <hex>  # act on that preview',
      '  $ berth take web1 gitea --yes                 # at a terminal: preview, then ask',
    ],
    runs: {
      act: { run: onFirstCall(async () => (await import('./take.ts')).take), route: '/take' },
    },
  },
  {
    name: 'converge',
    words: [target],
    summary: 'Bring a node, or a target of nodes, to its assignments: preview, then act',
    options: [
      'yes',
      'digest',
      'filter',
      'rotate',
      'fullDiff',
      'refresh',
      'detailedExitcode',
      'out',
      'parallel',
      'batch',
    ],
    examples: [
      '  $ berth converge web1                         # preview, ending with its digest',
      '  $ berth converge web1 --yes --digest <hex>    # act on that preview',
      '  $ berth converge @web --yes                   # at a terminal: preview, then ask',
      '  $ berth converge @web --out web.plan          # the preview as a plan file, to review',
    ],
    runs: {
      act: {
        run: onFirstCall(async () => (await import('./converge.ts')).converge),
        route: '/converge',
        keepsSurvey: true,
      },
    },
  },
  {
    name: 'adopt',
    words: [target],
    summary: "Survey a node's machine and record what it holds, module by module",
    options: [],
    examples: ['  $ berth adopt web1'],
    runs: {
      act: { run: onFirstCall(async () => (await import('./adopt.ts')).adopt), route: '/adopt' },
    },
  },
  {
    // The command line's alone: the API has no route for it.
    name: 'forget',
    words: [target, module],
    summary:
      'Stop managing a module no longer assigned, without running its stop (its data, files and secrets stay)',
    options: [],
    examples: ['  $ berth forget web1 gitea'],
    runs: { act: { run: onFirstCall(async () => (await import('./forget.ts')).forget) } },
  },
  {
    name: 'act',
    words: [{ name: 'file', stands: 'file', required: true }],
    summary: 'Act on a plan file that take or converge --out wrote, if nothing it covers changed',
    options: ['parallel', 'batch'],
    examples: [
      '  $ berth act web.plan                          # act on exactly that plan, if nothing changed',
    ],
    runs: 'edge',
  },
  {
    name: 'api',
    words: [],
    summary: 'Serve the Command API over HTTP',
    options: [['listen', { default: '127.0.0.1:8081' }], 'issuer', 'audience', 'issuerCa'],
    examples: ['  $ berth api --listen 127.0.0.1:8081 --issuer https://id.example.org'],
    runs: 'edge',
  },
  {
    name: 'view',
    words: [],
    summary: 'Serve the fleet, its nodes and the journal in a browser, on loopback; it never acts',
    options: [
      [
        'listen',
        { help: 'host:port to listen on: 127.0.0.1, ::1 or localhost', default: '127.0.0.1:8082' },
      ],
    ],
    examples: ['  $ berth view', '  $ berth view --listen 127.0.0.1:9000'],
    runs: 'edge',
  },
  {
    name: 'status',
    words: [{ name: 'node', stands: 'target' }],
    summary:
      'Show what each node (or each of a target, like @web) is to run, what berth manages, and its account',
    options: ['check'],
    examples: ['  $ berth status', '  $ berth status web1 --check'],
    runs: { answer: async (asked, deps) => (await import('./status.ts')).status(asked, deps) },
  },
  {
    name: 'log',
    words: [{ name: 'target', stands: 'target' }],
    summary: 'Show the journal of acts: of every node, or of a target (web1, @web)',
    options: ['since', 'tail'],
    examples: ['  $ berth log --json'],
    runs: { answer: async (asked, deps) => (await import('./log.ts')).log(asked, deps) },
  },
  {
    name: 'rekey',
    words: [{ name: 'node', stands: 'node' }],
    summary: 'Seal every kept secret again to the recipients in berth.json',
    options: [],
    examples: [],
    runs: {
      answer: async (asked, deps) => (await import('./rekey-state.ts')).rekeyState(asked, deps),
    },
  },
  {
    name: 'secret',
    words: [
      { name: 'node', stands: 'node', required: true },
      module,
      { name: 'name', stands: 'secret', required: true },
    ],
    summary: 'Print a secret the vault keeps (journaled)',
    options: [],
    examples: [],
    runs: {
      answer: async (asked, deps) => (await import('./secret-value.ts')).secretValue(asked, deps),
    },
  },
  {
    name: 'ca',
    words: [],
    summary: "Print the state's CA certificate (PEM), making the CA if the state has none",
    options: [],
    examples: [],
    runs: { answer: async (asked, deps) => (await import('./ca.ts')).ca(asked, deps) },
  },
  {
    name: 'copy-state',
    words: [],
    summary: "Copy the state directory's records into an empty PostgreSQL store",
    options: ['to'],
    examples: ['  $ berth copy-state --to postgresql://berth@db.lan/berth'],
    runs: 'edge',
  },
  {
    name: 'nodes',
    words: [{ name: 'target', stands: 'target' }],
    summary: 'Show the nodes of the inventory: kind, address, what each is to run',
    options: [],
    examples: ['  $ berth nodes', '  $ berth nodes web1 --json'],
    runs: { answer: async (asked, deps) => (await import('./nodes.ts')).nodes(asked, deps) },
  },
  {
    name: 'modules',
    words: [{ name: 'name', stands: 'module' }],
    summary: 'Show the modules of the catalog, or one whole',
    options: [],
    examples: ['  $ berth modules', '  $ berth modules gitea'],
    runs: { answer: async (asked, deps) => (await import('./modules.ts')).modules(asked, deps) },
  },
  {
    name: 'validate',
    words: [],
    summary: 'Check berth.json, every catalog definition and every template',
    options: [],
    examples: ['  $ berth validate --json'],
    runs: 'edge',
  },
  {
    name: 'completion',
    words: [{ name: 'shell', stands: 'shell' }],
    summary: 'Print the completion script for bash, zsh or fish',
    options: [],
    examples: [
      '  $ source <(berth completion bash)',
      '  $ berth completion zsh > ~/.zfunc/_berth   # with ~/.zfunc in fpath',
      '  $ berth completion fish > ~/.config/fish/completions/berth.fish',
    ],
    runs: 'edge',
  },
  {
    name: 'openapi',
    words: [],
    summary: "Print the Command API's OpenAPI 3.1 document",
    options: [],
    examples: ['  $ berth openapi > berth-api.json'],
    runs: {
      answer: async () => (await import('./openapi.ts')).openApiDocument(routes()),
    },
  },
  {
    name: 'help',
    words: [{ name: 'command', stands: 'command' }],
    summary: 'Show the commands, or one command with examples',
    options: [],
    examples: ['  $ berth help converge'],
    runs: 'edge',
  },
] as const satisfies readonly Entry[];

/** Every command's name. */
export type CommandName = (typeof TABLE)[number]['name'];

/** The commands whose program is the edge's, supplied there by name. */
export type EdgeName = Extract<(typeof TABLE)[number], { runs: 'edge' }>['name'];

/** The commands that answer a typed value, and what each answers. */
export type AnswerName = Extract<(typeof TABLE)[number], { runs: { answer: unknown } }>['name'];

/** A command's entry, by name. */
export function entryOf(name: string): Entry | undefined {
  return (TABLE as readonly Entry[]).find((entry) => entry.name === name);
}

/** The name of each option a command has, narrowed or not. */
export function optionNames(entry: Entry): OptionName[] {
  return entry.options.map((option) => (typeof option === 'string' ? option : option[0]));
}

/** A command that runs through the act runner, as the runner runs it. */
export function shapeOf(name: string): CommandShape {
  const entry = entryOf(name);
  if (!entry || typeof entry.runs !== 'object' || !('act' in entry.runs))
    throw new Error(`${name} is no act of the command table`);
  const { route: _, run, ...flags } = entry.runs.act;
  return {
    name: entry.name,
    // An act's words are the request's fields: `node`, then `module`.
    needs: entry.words.map((word) => word.name as 'node' | 'module'),
    options: optionNames(entry),
    run,
    ...flags,
  };
}

/** The Command API's routes: the acts of the table that have one, in the table's order. */
export function routes(): Route[] {
  return (TABLE as readonly Entry[]).flatMap((entry) =>
    typeof entry.runs === 'object' && 'act' in entry.runs && entry.runs.act.route
      ? [{ ...shapeOf(entry.name), route: entry.runs.act.route, summary: entry.summary }]
      : [],
  );
}

/**
 * A command's code, loaded at its first call: every start reads the table (help,
 * completion, the routes), only a run needs the command, and `berth status` none.
 */
function onFirstCall(load: () => Promise<CommandFunction>): CommandFunction {
  let loaded: Promise<CommandFunction> | undefined;
  return async (request, context) => {
    loaded ??= load();
    return (await loaded)(request, context);
  };
}

type EntryNamed<N extends CommandName> = Extract<(typeof TABLE)[number], { name: N }>;

/** What a command that answers a typed value answers. */
export type AnswerOf<N extends AnswerName> = EntryNamed<N>['runs'] extends {
  answer: (...args: never[]) => Promise<infer A>;
}
  ? A
  : never;
