import { writeSync } from 'node:fs';
import type { NodeEnd } from '../commands/outcome.ts';
import type { ProgressEvent } from '../commands/progress-events.ts';
import { progressLine } from '../words/progress.ts';
import { refusalWords } from '../words/refusals.ts';
import { doneWords } from '../words/steps.ts';
import type { Io } from './io.ts';
import { visible } from './visible.ts';

/**
 * How the command line shows a target's nodes getting on. On a terminal (standard error
 * is one): a line a node on standard error, redrawn in place, with its stage and elapsed
 * time; everything said is printed at the end. Otherwise: each step and hook line as it
 * comes, on standard output, prefixed by its node (`web1: wrote /etc/redis/redis.conf`).
 */
export interface FleetProgress {
  tell: (event: ProgressEvent) => void;
  /** Whether the steps went to standard output as they came (then only the untold is left). */
  toldOnOutput: boolean;
  /** Draws the last state and lets the terminal go. */
  end(): void;
}

export function fleetProgress(io: Io, options: { terminal: boolean }): FleetProgress {
  if (!options.terminal) {
    return {
      toldOnOutput: true,
      tell(event) {
        const line = progressLine(event);
        if (line !== undefined && 'node' in event) io.out(`${event.node}: ${line}`);
      },
      end() {},
    };
  }
  return liveView(io);
}

/** Where a node of a target stands, as its line shows it. */
type NodeStage = 'waiting' | 'surveying' | 'acting' | NodeEnd['how'];

interface Row {
  stage: NodeStage;
  since: number;
  ended?: number;
  detail: string;
  /** Steps done of the act, and of how many when its plan was counted. */
  done: number;
  of: number;
}

const REDRAW_MS = 100;

/** The live view: a line a node, in place, on standard error; colour unless NO_COLOR. */
function liveView(io: Io): FleetProgress {
  const colour = io.env.NO_COLOR === undefined || io.env.NO_COLOR === '';
  const rows = new Map<string, Row>();
  let drawn = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const height = Math.max(3, (process.stderr.rows || 24) - 2);
  const width = Math.max(20, (process.stderr.columns || 80) - 1);

  const draw = () => {
    const now = performance.now();
    const names = [...rows.keys()];
    const lines =
      names.length <= height
        ? names.map((node) => lineOf(node, rows.get(node) as Row, now, colour))
        : [summaryOf(rows)];
    let text = drawn > 0 ? `\x1b[${drawn}A` : '';
    for (const line of lines) text += `\r\x1b[2K${line.slice(0, width + (colour ? 12 : 0))}\n`;
    drawn = lines.length;
    writeSync(2, text);
  };
  const schedule = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      draw();
    }, REDRAW_MS);
  };
  // Elapsed time moves on while a node waits on a long hook.
  const ticking = setInterval(schedule, 1000);
  ticking.unref();

  return {
    toldOnOutput: false,
    tell(event) {
      const now = performance.now();
      const rowOf = (node: string): Row => {
        const row = rows.get(node) ?? { stage: 'waiting', since: now, detail: '', done: 0, of: 0 };
        rows.set(node, row);
        return row;
      };
      switch (event.kind) {
        case 'waiting':
        case 'surveying':
        case 'acting': {
          const row = rowOf(event.node);
          if (event.kind !== row.stage && event.kind !== 'waiting') row.since = now;
          row.stage = event.kind;
          row.detail = '';
          if (event.kind === 'acting') row.of = event.steps ?? 0;
          break;
        }
        case 'ended': {
          const row = rowOf(event.end.node);
          const { refusal } = event.end.outcome;
          row.stage = event.end.how;
          row.detail = refusal === undefined ? '' : refusalWords(refusal);
          row.ended = now;
          break;
        }
        case 'step': {
          const row = rowOf(event.node);
          row.done += 1;
          row.detail = `step ${row.done} of ${row.of}: ${doneWords(event.told.step, event.node, event.told.voice)}`;
          break;
        }
        default:
          return;
      }
      schedule();
    },
    end() {
      if (ended) return;
      ended = true;
      clearInterval(ticking);
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (rows.size > 0) draw();
    },
  };
}

const COLOURS: Partial<Record<NodeStage, string>> = {
  done: '\x1b[32m',
  failed: '\x1b[31m',
  refused: '\x1b[31m',
  blocked: '\x1b[33m',
};

function lineOf(node: string, row: Row, now: number, colour: boolean): string {
  const seconds = (((row.ended ?? now) - row.since) / 1000).toFixed(1);
  const stage = row.stage === 'not-begun' ? 'not begun' : row.stage;
  const shown = colour && COLOURS[row.stage] ? `${COLOURS[row.stage]}${stage}\x1b[0m` : stage;
  // Node text in berth's own drawing shows its control characters, as all output does.
  const detail = row.detail === '' ? '' : ` ${visible(row.detail.split('\n')[0] as string)}`;
  const time = row.stage === 'waiting' || row.stage === 'not-begun' ? '' : ` ${seconds}s`;
  return `${node}: ${shown}${time}${detail}`;
}

/** Too many nodes for the terminal: how many stand where, on one line. */
function summaryOf(rows: ReadonlyMap<string, Row>): string {
  const counts = new Map<string, number>();
  for (const row of rows.values()) counts.set(row.stage, (counts.get(row.stage) ?? 0) + 1);
  return [...counts].map(([stage, count]) => `${count} ${stage}`).join(', ');
}
