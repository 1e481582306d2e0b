import type { Code } from '../model/codes.ts';
import type { NodeReport, StepReport } from '../model/result.ts';
import type { JournalEntry, WordedSurvey } from '../stores/stores.ts';

/** What a node's preview would do for one module, as a cell of the fleet's matrix shows it. */
export type Cell =
  /** The node is not to run the module, and berth does not manage it there. */
  | { kind: 'none' }
  | { kind: 'in-sync' }
  | { kind: 'install'; steps: string[] }
  /** What drifted: each step that would bring it back. */
  | { kind: 'update'; steps: string[] }
  | { kind: 'release'; steps: string[] }
  /** Started, and its check fails: the converge would start it again. */
  | { kind: 'check-failing'; steps: string[] }
  | { kind: 'blocked'; words: string[]; codes: Code[] }
  /** The node's preview was refused as a whole (unreachable, not in the inventory…). */
  | { kind: 'refused'; words: string; code?: Code }
  /** The node is to run the module, and no survey of it is kept yet. */
  | { kind: 'unsurveyed' };

/** A node as the matrix needs it beside its preview: what it runs and what berth manages. */
export interface NodeModules {
  /** What the node is to run (assigned or declared), and what berth manages there. */
  modules: readonly string[];
  /** Modules berth manages on the node, and whether each was started. */
  managed: Readonly<Record<string, { started: boolean }>>;
}

/** What is kept of a node's survey: the newest, and the acts journaled on the node since. */
export interface NodeSurveyed {
  survey?: WordedSurvey;
  /** Acts on the node journaled after its survey, newest first: the survey may no longer hold. */
  since: JournalEntry[];
}

/** One row: a node, its cells by module, and what stands in its way apart from any module. */
export interface Row extends NodeSurveyed {
  node: string;
  cells: Record<string, Cell>;
  /** Blockers that name no module, and the node's refusal, in words. */
  notes: string[];
}

/** Each node's row, from its newest survey: the node's part of a converge preview, typed. */
export function rowsOf(
  surveyed: ReadonlyMap<string, NodeSurveyed>,
  nodes: ReadonlyMap<string, NodeModules>,
  columns: readonly string[],
): Row[] {
  return [...nodes].map(([node, held]) => {
    const { survey, since = [] } = surveyed.get(node) ?? {};
    const cells: Record<string, Cell> = {};
    const notes: string[] = [];
    const row = { node, cells, notes, since, ...(survey ? { survey } : {}) };
    if (!survey) {
      for (const module of columns)
        cells[module] = held.modules.includes(module) ? { kind: 'unsurveyed' } : { kind: 'none' };
      return row;
    }
    const { report } = survey;
    if (report.outcome === 'refused' || report.outcome === 'failed') {
      const words = survey.refused ?? 'its preview was refused';
      for (const module of columns)
        cells[module] = held.modules.includes(module)
          ? { kind: 'refused', words, ...(report.code ? { code: report.code } : {}) }
          : { kind: 'none' };
      notes.push(words);
      return row;
    }
    for (const module of columns) cells[module] = cellOf(module, report, held);
    for (const blocker of report.blockers) if (!blocker.module) notes.push(blocker.words);
    return row;
  });
}

/** The cell of one module on a node whose preview was made. */
export function cellOf(module: string, report: NodeReport, held: NodeModules): Cell {
  const blockers = report.blockers.filter((blocker) => blocker.module === module);
  if (blockers.length > 0)
    return {
      kind: 'blocked',
      words: blockers.map((blocker) => blocker.words),
      codes: blockers.map((blocker) => blocker.code),
    };
  const steps = report.steps.filter((step) => step.module === module);
  const managed = held.managed[module];
  if (steps.length === 0)
    return held.modules.includes(module) ? { kind: 'in-sync' } : { kind: 'none' };
  const said = steps.map(stepWords);
  if (steps.some((step) => step.kind === 'release')) return { kind: 'release', steps: said };
  if (!managed) return { kind: 'install', steps: said };
  // A module already started is started again only when its check fails.
  if (managed.started && steps.some((step) => step.kind === 'start'))
    return { kind: 'check-failing', steps: said };
  return { kind: 'update', steps: said };
}

/** A step in a few words, for a cell: "write /etc/redis/redis.conf", "package nginx 1.22". */
function stepWords(step: StepReport): string {
  const what = step.package
    ? `${step.package}${step.version ? ` ${step.version}` : ''}`
    : (step.path ?? step.secret ?? '');
  return what === '' ? step.kind : `${step.kind} ${what}`;
}

/** How many cells are of each kind: the fleet page's summary line. */
export function tally(rows: readonly Row[]): Partial<Record<Cell['kind'], number>> {
  const counts: Partial<Record<Cell['kind'], number>> = {};
  for (const row of rows)
    for (const cell of Object.values(row.cells))
      if (cell.kind !== 'none') counts[cell.kind] = (counts[cell.kind] ?? 0) + 1;
  return counts;
}
