import type { StateLocation } from '../config/state-dir.ts';
import { parseDuration } from '../duration.ts';
import { oneLine } from '../one-line.ts';
import { enveloped } from '../result.ts';
import type { JournalEntry, JournalQuery } from '../stores/stores.ts';
import { resolveTarget } from '../targets.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { readingFailed } from './reading-failed.ts';

/** What `berth log` was asked: a target as typed, and how far back and how many, in ms and acts. */
export interface LogAsked {
  target?: string;
  since?: { ms: number; typed: string };
  tail?: number;
}

const DAYS = /^(\d{1,5})d$/;

/** `berth log [target] [--since D] [--tail N]` as typed, or a usage error in the user's words. */
export function parseLogQuery(
  target: string | undefined,
  since: string | undefined,
  tail: string | undefined,
): LogAsked {
  const asked: LogAsked = target === undefined ? {} : { target };
  if (since !== undefined) {
    const days = DAYS.exec(since);
    const ms = days ? Number(days[1]) * 86_400_000 : parseDuration(since);
    if (ms === undefined)
      throw new UsageError(
        `--since takes a duration, like 90s, 15m, 2h or 7d, not ${JSON.stringify(since)}`,
      );
    asked.since = { ms, typed: since };
  }
  if (tail !== undefined) {
    if (!/^[1-9][0-9]{0,5}$/.test(tail))
      throw new UsageError(
        `--tail takes a whole number of acts from 1, not ${JSON.stringify(tail)}`,
      );
    asked.tail = Number(tail);
  }
  return asked;
}

/**
 * `berth log`: the journal, oldest first, a line an act; of a target alone (its nodes, and
 * the acts asked for it that reached none), of the last while, its last acts. A target
 * names the nodes berth.json has, and those whose records berth keeps still.
 */
export async function showLog(asked: LogAsked, location: StateLocation, json: boolean, io: Io) {
  const deps = stateDeps(location, io.env);
  try {
    const query: JournalQuery = { tail: asked.tail };
    if (asked.since) query.since = new Date(Date.now() - asked.since.ms).toISOString();
    if (asked.target !== undefined) {
      await deps.stores.open();
      const { settings } = await deps.loadConfig();
      const kept = await deps.stores.listNodes();
      const nodes = [...new Set([...Object.keys(settings.nodes), ...kept])];
      const targeted = resolveTarget(asked.target, { nodes, groups: settings.groups });
      if (!targeted.ok) {
        if (json)
          io.out(JSON.stringify(enveloped({ refused: targeted.refused, code: targeted.code })));
        else io.err(targeted.refused);
        return EXIT.refused;
      }
      query.about = [...targeted.nodes, asked.target];
    }
    const lines = await deps.stores.readJournal(query);
    if (json) {
      const shown = lines.map((line) =>
        'entry' in line ? JSON.stringify(enveloped(line.entry)) : line.notAnEntry,
      );
      if (shown.length > 0) io.out(shown.join('\n'));
      return EXIT.done;
    }
    if (lines.length === 0) {
      io.out(nothingWords(asked));
      return EXIT.done;
    }
    const shown = lines.map((line) => {
      if (!('entry' in line)) {
        // Only a hand edit makes such a line (berth appends whole lines); show it, do not stop.
        return `${line.where} is not a journal entry: ${JSON.stringify(line.notAnEntry.slice(0, 120))}`;
      }
      return entryLine(line.entry);
    });
    io.out(shown.join('\n'));
    return EXIT.done;
  } catch (error) {
    return readingFailed(error, io, { json });
  } finally {
    await deps.stores.close().catch(() => {});
  }
}

/**
 * An act in one line: when, who (and on which face), what on which node (of which
 * target, when it was one of several), how it ended, and the digest it acted on.
 */
function entryLine(entry: JournalEntry): string {
  const of = entry.target !== undefined && entry.target !== entry.node ? `of ${entry.target}` : '';
  const what = [entry.act, entry.node, of, entry.module].filter(Boolean).join(' ');
  const outcome = entry.outcome === 'done' ? 'done' : `${entry.outcome}: ${entry.error}`;
  const digest = entry.digest === undefined ? '' : ` (digest ${entry.digest.slice(0, 12)})`;
  return oneLine(`${entry.at} ${entry.actor} (${entry.via}) ${what}: ${outcome}${digest}`);
}

/** That there is nothing to show: an empty journal, or none of its acts asked for. */
function nothingWords({ target, since }: LogAsked): string {
  if (target === undefined && since === undefined) return 'the journal is empty: no act yet';
  const on = target === undefined ? '' : ` on ${target}`;
  const when = since === undefined ? '' : ` in the last ${since.typed}`;
  return `the journal has no act${on}${when}`;
}
