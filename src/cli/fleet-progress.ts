import { writeSync } from 'node:fs';
import type { FleetEvent, NodeStage } from '../commands/fleet-watch.ts';
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
  watch: (event: FleetEvent) => void;
  /** Whether the steps went to standard output as they came (then only the untold is left). */
  toldOnOutput: boolean;
  /** Draws the last state and lets the terminal go. */
  end(): void;
}

export function fleetProgress(io: Io, options: { terminal: boolean }): FleetProgress {
  if (!options.terminal) {
    return {
      toldOnOutput: true,
      watch(event) {
        if (event.kind === 'step')
          io.out(`${event.node}: ${doneWords(event.told.step, event.node, event.told.voice)}`);
        else if (event.kind === 'output') io.out(`${event.node}: ${event.line}`);
      },
      end() {},
    };
  }
  return liveView(io);
}

interface Row {
  stage: NodeStage;
  since: number;
  ended?: number;
  detail: string;
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
    watch(event) {
      const now = performance.now();
      const row = rows.get(event.node) ?? { stage: 'waiting', since: now, detail: '' };
      if (event.kind === 'stage') {
        if (event.stage !== row.stage && (event.stage === 'surveying' || event.stage === 'acting'))
          row.since = now;
        row.stage = event.stage;
        row.detail = event.refusal === undefined ? '' : refusalWords(event.refusal);
        if (isEnd(event.stage)) row.ended = now;
      } else if (event.kind === 'step') {
        row.detail = `step ${event.done} of ${event.of}: ${doneWords(event.told.step, event.node, event.told.voice)}`;
      }
      rows.set(event.node, row);
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

function isEnd(stage: NodeStage): boolean {
  return ['done', 'failed', 'blocked', 'refused', 'not-begun'].includes(stage);
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
