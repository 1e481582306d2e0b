import type { CommandRequest, Outcome } from '../request.ts';
import { adopt } from './adopt.ts';
import { assign } from './assign.ts';
import type { CommandContext, CommandFunction } from './context.ts';
import { converge } from './converge.ts';
import { take } from './take.ts';
import { unassign } from './unassign.ts';

export type Option = 'yes' | 'digest' | 'filter' | 'mint';

/** One command, described once: the command line and the Command API are both made from it. */
export interface Command {
  name: string;
  route: `/${string}`;
  /** Required request fields: both faces check them with the same words. */
  needs: readonly ('node' | 'module')[];
  summary: string;
  options: readonly Option[];
  run: CommandFunction;
}

export const commands: readonly Command[] = [
  {
    name: 'assign',
    route: '/assign',
    needs: ['node', 'module'],
    summary: 'Keep that a node is to run a module',
    options: [],
    run: assign,
  },
  {
    name: 'unassign',
    route: '/unassign',
    needs: ['node', 'module'],
    summary: 'Drop that a node is to run a module (converge releases it; its data stays)',
    options: [],
    run: unassign,
  },
  {
    name: 'take',
    route: '/take',
    needs: ['node', 'module'],
    summary: 'Bring a module the machine already holds under berth: preview, then act',
    options: ['yes', 'digest', 'mint'],
    run: take,
  },
  {
    name: 'converge',
    route: '/converge',
    needs: ['node'],
    summary: 'Bring a node to its assignments: preview, then act',
    options: ['yes', 'digest', 'filter'],
    run: converge,
  },
  {
    name: 'adopt',
    route: '/adopt',
    needs: ['node'],
    summary: "Survey a node's machine and record what it holds, module by module",
    options: [],
    run: adopt,
  },
];

/** The refusal for a request without the fields its command needs, or undefined. */
export function missingFields(command: Command, request: CommandRequest): string | undefined {
  const needsModule = command.needs.includes('module');
  if (request.node === '' || (needsModule && request.module === '')) {
    return needsModule ? 'both node and module are needed' : 'node is needed';
  }
  return undefined;
}

/** Previews change nothing and are not journaled; everything else a command does is an act. */
function isAct(command: Command, request: CommandRequest) {
  return !command.options.includes('yes') || request.yes;
}

/**
 * Runs a command's function and journals the act with its outcome. An unexpected
 * failure inside the function becomes a refusal in words, never a stack trace.
 */
export async function runCommand(
  command: Command,
  request: CommandRequest,
  context: CommandContext,
): Promise<Outcome> {
  let outcome: Outcome;
  try {
    outcome = await command.run(request, context);
  } catch (error) {
    outcome = { said: '', error: `${command.name} failed: ${(error as Error).message}` };
  }
  if (!isAct(command, request)) return outcome;
  try {
    await context.stores.journal({
      at: context.now().toISOString(),
      actor: context.actor,
      via: context.via,
      act: command.name,
      node: request.node,
      module: command.needs.includes('module') ? request.module : request.filter || undefined,
      outcome: outcome.error === undefined ? 'done' : 'refused',
      said: outcome.said,
      error: outcome.error,
    });
  } catch (error) {
    // The act stands (undoing it could lose more); the caller must hear that the
    // record of it is missing, in words that do not read as "nothing was done".
    const why = (error as Error).message;
    return {
      said: outcome.said,
      error:
        outcome.error === undefined
          ? `${command.name} was done, but the journal could not record it: ${why}`
          : `${outcome.error} (and the journal could not record this refusal: ${why})`,
    };
  }
  return outcome;
}
