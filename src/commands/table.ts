import type { CommandFunction } from './context.ts';

/**
 * Options of the command line; `mint`, `rotate`, `detailed-exitcode`, `fullDiff`, `refresh`,
 * `out` (a preview's plan file), and how a target's act runs (`parallel`, `batch`) are the
 * command line's alone.
 */
export type Option =
  | 'yes'
  | 'digest'
  | 'filter'
  | 'mint'
  | 'rotate'
  | 'detailed-exitcode'
  | 'fullDiff'
  | 'out'
  | 'refresh'
  | 'parallel'
  | 'batch';

/** A command as the act runner runs it, whichever face it has. */
export interface CommandShape {
  name: string;
  /** Required request fields: both faces check them with the same words. */
  needs: readonly ('node' | 'module')[];
  summary: string;
  options: readonly Option[];
  run: CommandFunction;
  /**
   * Works on the node's records alone, never its machine: it reaches a node berth.json no
   * longer names while the stores keep its records (`rekey`: else its values would stay
   * sealed to a recipient removed).
   */
  recordsAlone?: true;
  /** Changes nothing (`status --check`): not journaled, as a preview is not. */
  changesNothing?: true;
  /**
   * Its preview of a whole node is that node's survey: kept by the stores as the node's
   * newest, for whoever reads the fleet later without surveying it (`berth view`).
   */
  keepsSurvey?: true;
}

/** One command, described once: the command line and the Command API are both made from it. */
export interface Command extends CommandShape {
  route: `/${string}`;
}

export const commands: readonly Command[] = [
  {
    name: 'assign',
    route: '/assign',
    needs: ['node', 'module'],
    summary: 'Keep that a node is to run a module',
    options: [],
    run: onFirstCall(async () => (await import('./assign.ts')).assign),
  },
  {
    name: 'unassign',
    route: '/unassign',
    needs: ['node', 'module'],
    summary: 'Drop that a node is to run a module (converge releases it; its data stays)',
    options: [],
    run: onFirstCall(async () => (await import('./unassign.ts')).unassign),
  },
  {
    name: 'take',
    route: '/take',
    needs: ['node', 'module'],
    summary: 'Bring a module the machine already holds under berth: preview, then act',
    options: ['yes', 'digest', 'mint', 'fullDiff', 'detailed-exitcode', 'out', 'parallel', 'batch'],
    run: onFirstCall(async () => (await import('./take.ts')).take),
  },
  {
    name: 'converge',
    route: '/converge',
    needs: ['node'],
    summary: 'Bring a node, or a target of nodes, to its assignments: preview, then act',
    options: [
      'yes',
      'digest',
      'filter',
      'rotate',
      'fullDiff',
      'refresh',
      'detailed-exitcode',
      'out',
      'parallel',
      'batch',
    ],
    run: onFirstCall(async () => (await import('./converge.ts')).converge),
    keepsSurvey: true,
  },
  {
    name: 'adopt',
    route: '/adopt',
    needs: ['node'],
    summary: "Survey a node's machine and record what it holds, module by module",
    options: [],
    run: onFirstCall(async () => (await import('./adopt.ts')).adopt),
  },
];

/** Commands of the command line alone: the API answers the five, and has no route for these. */
export const commandLineOnly: readonly CommandShape[] = [
  {
    name: 'forget',
    needs: ['node', 'module'],
    summary:
      'Stop managing a module no longer assigned, without running its stop (its data, files and secrets stay)',
    options: [],
    run: onFirstCall(async () => (await import('./forget.ts')).forget),
  },
];

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
