import { describePreview } from './commands/converge-words.ts';
import { refreshedWords } from './commands/package-words.ts';
import type { CommandResult } from './commands/results.ts';
import { toldLines } from './commands/steps/words.ts';
import { describeTakePreview } from './commands/take-words.ts';
import type { DiffShownOnce } from './diff-shown.ts';
import type { Outcome } from './request.ts';
import { doesNotResolve } from './resolve.ts';
import { type Account, type Holdings, holdsNothing } from './state.ts';

/**
 * The one renderer of `said`: the words of a command's typed result, the same for the
 * command line, the API's answer and the journal. A command not moved to a typed result
 * yet (take, converge) brings its words along. A target's preview may show a diff once for
 * several nodes (`shownOnce`), in place of each node's.
 */
export function saidOf(
  outcome: Pick<Outcome, 'said' | 'result'>,
  shownOnce?: DiffShownOnce,
): string {
  return outcome.result ? said(outcome.result, shownOnce) : (outcome.said ?? '');
}

function said(result: CommandResult, shownOnce: DiffShownOnce | undefined): string {
  const { node } = result;
  switch (result.command) {
    case 'assign':
      return result.already
        ? `${node} is already to run ${result.module}; nothing changed`
        : `${node} is to run ${result.module}`;
    case 'unassign':
      return result.managed
        ? `${node} is no longer to run ${result.module}; converge ${node} to release it (its data stays)`
        : `${node} is no longer to run ${result.module}`;
    case 'forget':
      return `berth no longer manages ${result.module} on ${node}; its stop was not run, and its data, files and secrets stay on ${node} and in the vault`;
    case 'adopt':
      return describeAccount(node, result.account);
    case 'secret':
      return `${result.actor} read the secret ${result.secret} of ${result.module} on ${node}`;
    case 'rekey':
      return `sealed ${result.resealed} value${result.resealed === 1 ? '' : 's'} of ${node} again to the recipients of now`;
    case 'converge': {
      if ('preview' in result) {
        const title = result.filter
          ? `converge ${node}, ${result.filter} alone`
          : `converge ${node}`;
        const preview = describePreview(
          title,
          node,
          result.preview.plan,
          result.preview,
          shownOnce,
        );
        return result.preview.refreshed ? `${refreshedWords(node)}\n${preview}` : preview;
      }
      if (result.act === 'nothing-to-do') return `${node} is as assigned: nothing to do`;
      const lines = result.act.told.flatMap((told) => toldLines(told, node));
      const last = convergedLine(result);
      return [...lines, ...(last === undefined ? [] : [last])].join('\n');
    }
    case 'take': {
      if ('preview' in result)
        return describeTakePreview(node, result.module, result.preview, shownOnce);
      const lines = result.act.told.flatMap((told) => toldLines(told, node));
      const after = blockedLine(result);
      return [...lines, ...(after === undefined ? [] : [after])].join('\n');
    }
  }
}

/** After a take: the module it assigned does not resolve, so the next converge is blocked. */
function blockedLine(result: CommandResult & { command: 'take' }): string | undefined {
  if (!('act' in result) || result.act.blocksConverge === undefined) return undefined;
  const { node, module } = result;
  return `${doesNotResolve(module, node, result.act.blocksConverge)}: converge ${node} is blocked until it does`;
}

/**
 * The part of `said` the command line has not printed yet when it printed each step as
 * it was done (`progress`); undefined when it told none (then `said` is all to print).
 */
export function untoldOf(outcome: Pick<Outcome, 'result' | 'untold'>): string | undefined {
  const { result } = outcome;
  if (result?.command === 'converge' && 'act' in result && result.act !== 'nothing-to-do')
    return convergedLine(result) ?? '';
  if (result?.command === 'take' && 'act' in result) return blockedLine(result) ?? '';
  return outcome.untold;
}

/** The last line of a converge act that went through. */
function convergedLine(result: CommandResult & { command: 'converge' }): string | undefined {
  if (!('act' in result) || result.act === 'nothing-to-do' || result.act.stopped) return undefined;
  return `${result.node} is as assigned`;
}

function describeAccount(node: string, account: Account): string {
  const lines = [`account of ${node}, taken ${account.takenAt}`];
  for (const [name, holdings] of Object.entries(account.modules).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    lines.push(...describeHoldings(name, holdings));
  }
  for (const [name, problem] of Object.entries(account.problems)) {
    lines.push(`${name}: not surveyed: ${problem}`);
  }
  if (lines.length === 1)
    lines.push(`the catalog holds no modules; there was nothing to look for on ${node}`);
  return lines.join('\n');
}

function describeHoldings(module: string, holdings: Holdings): string[] {
  if (holdsNothing(holdings)) return [`${module}: holds nothing`];
  const lines = [`${module}:`];
  for (const { path, found, link } of holdings.data) {
    lines.push(`  data ${path}: ${link ?? (found ? 'found' : 'not found')}`);
  }
  for (const [name, secret] of Object.entries(holdings.secrets)) {
    const fact = secret.found ? `found, fingerprint ${short(secret.fingerprint)}` : 'not found';
    lines.push(`  secret ${name} at ${secret.path}: ${secret.link ?? fact}`);
  }
  for (const [path, file] of Object.entries(holdings.files)) {
    const fact = file.found
      ? `found, mode ${file.mode}, fingerprint ${short(file.fingerprint)}`
      : 'not found';
    lines.push(`  file ${path}: ${file.link ?? fact}`);
  }
  return lines;
}

function short(fingerprint: string | undefined) {
  return (fingerprint ?? '').slice(0, 12);
}
