import type { Code } from '../codes.ts';
import type { CommandAnswer, NodeReport, StepReport } from '../result.ts';

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
  | { kind: 'refused'; words: string; code?: Code };

/** A node as the matrix needs it beside its preview: what it runs and what berth manages. */
export interface NodeModules {
  /** What the node is to run (assigned or declared), and what berth manages there. */
  modules: readonly string[];
  /** Modules berth manages on the node, and whether each was started. */
  managed: Readonly<Record<string, { started: boolean }>>;
}

/** One row: a node, its cells by module, and what stands in its way apart from any module. */
export interface Row {
  node: string;
  cells: Record<string, Cell>;
  /** Blockers that name no module, and the node's refusal, in words. */
  notes: string[];
  digest?: string;
}

/** Each node's row, from the typed answer of a converge preview of the target. */
export function rowsOf(
  answer: CommandAnswer,
  nodes: ReadonlyMap<string, NodeModules>,
  columns: readonly string[],
): Row[] {
  const refusals = refusalsByNode(answer.refused);
  return [...nodes].map(([node, held]) => {
    const report = answer.nodes[node];
    const cells: Record<string, Cell> = {};
    const notes: string[] = [];
    if (!report || report.outcome === 'refused' || report.outcome === 'failed') {
      const words = refusals.get(node) ?? answer.refused ?? 'no preview was made of this node';
      for (const module of columns)
        cells[module] = held.modules.includes(module)
          ? { kind: 'refused', words, ...(report?.code ? { code: report.code } : {}) }
          : { kind: 'none' };
      notes.push(words);
      return { node, cells, notes };
    }
    for (const module of columns) cells[module] = cellOf(module, report, held);
    for (const blocker of report.blockers) if (!blocker.module) notes.push(blocker.words);
    return { node, cells, notes, ...(report.digest ? { digest: report.digest } : {}) };
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

/** "web1: words\nweb2: words" (a target's `refused`), by node. */
function refusalsByNode(refused: string | undefined): Map<string, string> {
  const byNode = new Map<string, string>();
  for (const line of refused?.split('\n') ?? []) {
    const match = /^([a-z0-9][a-z0-9-]{0,62}): (.*)$/s.exec(line);
    if (match) byNode.set(match[1] as string, match[2] as string);
  }
  return byNode;
}

/** How many cells are of each kind: the fleet page's summary line. */
export function tally(rows: readonly Row[]): Partial<Record<Cell['kind'], number>> {
  const counts: Partial<Record<Cell['kind'], number>> = {};
  for (const row of rows)
    for (const cell of Object.values(row.cells))
      if (cell.kind !== 'none') counts[cell.kind] = (counts[cell.kind] ?? 0) + 1;
  return counts;
}
