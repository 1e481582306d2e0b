import type { Outcome, TargetRun } from '../commands/outcome.ts';
import type { CommandResult } from '../commands/results.ts';
import type { DiffShownOnce } from '../diff/diff-shown.ts';
import { doesNotResolve } from '../model/resolve.ts';
import { type Account, type Holdings, holdsNothing } from '../model/state.ts';
import { targetWords } from './asked.ts';
import { describePreview } from './converge.ts';
import { refreshedWords } from './packages.ts';
import { refusalWords } from './refusals.ts';
import { SharedDiffs } from './shared-diffs.ts';
import { toldLines } from './steps.ts';
import { datumWords, describeTakePreview } from './take.ts';
import { actRecapLine, adoptRecapLine, prefixed, previewRecapLine } from './target.ts';

/**
 * How the edge shows a result, which the result does not say: `fullDiff`, each file's
 * whole diff in a preview (the command line's `--full-diff`, the kept survey always),
 * else its settings first and about 40 lines.
 */
export interface SaidOptions {
  fullDiff?: boolean;
}

/**
 * The one renderer of `said`: the words of a command's typed result, the same for the
 * command line, the API's answer and the journal; a target of several nodes in each
 * node's words and a recap.
 */
export function saidOf(
  outcome: Pick<Outcome, 'result' | 'several'>,
  options: SaidOptions = {},
): string {
  if (outcome.several) return targetSaid(outcome.several, options).said;
  return nodeSaid(outcome, options.fullDiff ?? false);
}

/**
 * A node's own words; in a target's preview, a diff shown once for several nodes
 * (`shownOnce`) stands in place of its own.
 */
function nodeSaid(
  { result }: Pick<Outcome, 'result'>,
  fullDiff: boolean,
  shownOnce?: DiffShownOnce,
): string {
  return result ? said(result, fullDiff, shownOnce) : '';
}

function said(
  result: CommandResult,
  fullDiff: boolean,
  shownOnce: DiffShownOnce | undefined,
): string {
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
          fullDiff,
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
        return describeTakePreview(node, result.module, result.preview, fullDiff, shownOnce);
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
export function untoldOf(outcome: Pick<Outcome, 'result' | 'several'>): string | undefined {
  const { result, several } = outcome;
  if (several) return targetSaid(several).untold;
  if (result?.command === 'converge' && 'act' in result && result.act !== 'nothing-to-do')
    return convergedLine(result) ?? '';
  if (result?.command === 'take' && 'act' in result) return blockedLine(result) ?? '';
  return undefined;
}

/**
 * A target's words: every node's own, by node; a recap, a line a node; a preview's digest
 * last. `untold`, after an act: what the command line has not printed yet when it printed
 * each node's steps as they were done.
 */
export function targetSaid(
  run: TargetRun,
  { fullDiff = false }: SaidOptions = {},
): { said: string; untold?: string } {
  const { ends, command } = run;
  const recapOf = `recap of ${targetWords(command, run.request)}:`;
  if (run.kind === 'each') {
    const said = ends.flatMap(({ node, outcome }) => prefixed(node, nodeSaid(outcome, fullDiff)));
    // An adopt of many nodes ends with what each holds, a line a node, to read at a glance.
    if (command === 'adopt') {
      const adopted = ends.filter(({ outcome }) => outcome.refusal === undefined).length;
      said.push(
        recapOf,
        ...ends.map(({ node, outcome }) => adoptRecapLine(node, outcome)),
        `${adopted} of ${ends.length} nodes adopted`,
      );
    }
    return { said: said.join('\n') };
  }
  if (run.kind === 'preview') {
    // A diff the same on several nodes is shown once, after the nodes, naming them.
    const shared = new SharedDiffs(new Map(ends.map(({ node, outcome }) => [node, outcome])));
    const blocks = ends.map(({ node, outcome }) => {
      const said = nodeSaid(outcome, fullDiff, shared.shownOnceFor(node));
      const lines = said === '' ? [] : [said];
      if (outcome.refusal !== undefined) lines.push(`${node}: ${refusalWords(outcome.refusal)}`);
      return lines.join('\n');
    });
    const once = shared.words(fullDiff);
    const recap = ends.map(({ node, outcome }) => previewRecapLine(node, command, outcome));
    const said = [
      ...blocks,
      ...(once === '' ? [] : [once]),
      [recapOf, ...recap].join('\n'),
      `digest ${run.digest}`,
    ].join('\n\n');
    return { said };
  }
  if (run.refused) return { said: '' };
  const recap = ends.map((end) => actRecapLine(end.node, end));
  const done = ends.filter((end) => end.how === 'done').length;
  const last = `${done} of ${ends.length} nodes done`;
  const said = ends.flatMap(({ node, outcome }) => prefixed(node, nodeSaid(outcome, fullDiff)));
  const untold = ends.flatMap(({ node, outcome }) => prefixed(node, untoldOf(outcome) ?? ''));
  return {
    said: [...said, recapOf, ...recap, last].join('\n'),
    untold: [...untold, recapOf, ...recap, last].join('\n'),
  };
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
  for (const datum of holdings.data) lines.push(`  data ${datum.path}: ${datumWords(datum)}`);
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
