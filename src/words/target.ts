import type { NodeEnd, Outcome } from '../commands/outcome.ts';
import type { StepReport } from '../model/result.ts';
import { holdsNothing } from '../model/state.ts';
import { blockerWords } from './blockers.ts';
import { refusalWords } from './refusals.ts';

/** A node's words, a line each prefixed by its name: `web1: wrote /etc/redis/redis.conf`. */
export function prefixed(node: string, text: string): string[] {
  if (text === '') return [];
  return text.split('\n').map((line) => `${node}: ${line}`);
}

/** A preview's recap line: what the node's act would do, that it is blocked, or nothing. */
export function previewRecapLine(node: string, command: string, outcome: Outcome): string {
  const report = outcome.report;
  if (outcome.refusal !== undefined) return `  ${node}: refused: ${refusalWords(outcome.refusal)}`;
  if (report && report.blockers.length > 0)
    return `  ${node}: blocked: ${report.blockers.map((blocker) => blockerWords(blocker, node)).join('; ')}`;
  if (!report || report.steps.length === 0) return `  ${node}: nothing to do`;
  const actions = actionsOf(command, report.steps).join(', ');
  const count = report.steps.length;
  return `  ${node}: ${actions} (${count} ${count === 1 ? 'step' : 'steps'})`;
}

/** An act's recap line: done, failed at which step, blocked, refused or not begun, with its time. */
export function actRecapLine(node: string, end: NodeEnd): string {
  const time = ` in ${(end.ms / 1000).toFixed(1)} s`;
  const error = end.outcome.refusal === undefined ? '' : refusalWords(end.outcome.refusal);
  switch (end.how) {
    case 'previewed':
    case 'done':
      return `  ${node}: done${time}`;
    case 'failed':
      return `  ${node}: failed${time}: ${error}`;
    case 'blocked':
      return `  ${node}: blocked: ${error}`;
    case 'refused':
      return `  ${node}: refused: ${error}`;
    case 'not-begun':
      return `  ${node}: not begun`;
  }
}

/** An adopt's recap line: the modules the node holds something of, or that it was refused. */
export function adoptRecapLine(node: string, outcome: Outcome): string {
  if (outcome.refusal !== undefined) return `  ${node}: refused: ${refusalWords(outcome.refusal)}`;
  if (outcome.result?.command !== 'adopt') return `  ${node}: adopted`;
  const { modules, problems } = outcome.result.account;
  const surveyed = Object.entries(modules);
  const held = surveyed.filter(([, holdings]) => !holdsNothing(holdings)).map(([name]) => name);
  const unsurveyed = Object.keys(problems).length;
  const what =
    held.length > 0
      ? `holds ${held.sort().join(', ')}`
      : surveyed.length > 0
        ? `holds nothing of the catalog's ${surveyed.length === 1 ? 'one module' : `${surveyed.length} modules`}`
        : 'nothing to look for: the catalog holds no modules';
  return `  ${node}: ${what}${unsurveyed > 0 ? `; ${unsurveyed} not surveyed` : ''}`;
}

/**
 * What a node's plan does to each module, from its steps in order: a take takes it; a
 * converge releases it (a release step), installs it (a fresh install begins by managing
 * it) or updates it.
 */
function actionsOf(command: string, steps: readonly StepReport[]): string[] {
  const byModule = new Map<string, StepReport[]>();
  for (const step of steps) {
    const list = byModule.get(step.module) ?? [];
    list.push(step);
    byModule.set(step.module, list);
  }
  return [...byModule].map(([module, list]) => {
    if (command === 'take') return `take ${module}`;
    if (list.some((step) => step.kind === 'release')) return `release ${module}`;
    if (list[0]?.kind === 'manage') return `install ${module}`;
    return `update ${module}`;
  });
}
