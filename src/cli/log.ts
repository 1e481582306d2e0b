import type { Asked } from '../commands/command-shape.ts';
import type { LogAnswer } from '../commands/log.ts';
import { enveloped } from '../model/result.ts';
import type { JournalEntry } from '../stores/stores.ts';
import { oneLine } from '../utils/one-line.ts';
import { entryShown, entryWords } from '../words/journal.ts';
import type { AnswerWords } from './answer-words.ts';

/** `berth log` in words, a line an act; with `--json`, one enveloped entry a line. */
export const logWords: AnswerWords<LogAnswer> = {
  words(answer, asked, io) {
    if ('refused' in answer) return;
    if (answer.lines.length === 0) {
      io.out(nothingWords(asked));
      return;
    }
    const shown = answer.lines.map((line) => {
      if (!('entry' in line)) {
        // Only a hand edit makes such a line (berth appends whole lines); show it, do not stop.
        return `${line.where} is not a journal entry: ${JSON.stringify(line.notAnEntry.slice(0, 120))}`;
      }
      return entryLine(line.entry);
    });
    io.out(shown.join('\n'));
  },
  json(answer) {
    if ('refused' in answer) return JSON.stringify(answer);
    const shown = answer.lines.map((line) =>
      'entry' in line ? JSON.stringify(enveloped(entryShown(line.entry))) : line.notAnEntry,
    );
    return shown.length > 0 ? shown.join('\n') : undefined;
  },
};

/**
 * An act in one line: when, who (and on which face), what on which node (of which
 * target, when it was one of several), how it ended, and the digest it acted on.
 */
function entryLine(entry: JournalEntry): string {
  const of = entry.target !== undefined && entry.target !== entry.node ? `of ${entry.target}` : '';
  const what = [entry.act, entry.node, of, entry.module].filter(Boolean).join(' ');
  const outcome =
    entry.outcome === 'done' ? 'done' : `${entry.outcome}: ${entryWords(entry).error}`;
  const digest = entry.digest === undefined ? '' : ` (digest ${entry.digest.slice(0, 12)})`;
  return oneLine(`${entry.at} ${entry.actor} (${entry.via}) ${what}: ${outcome}${digest}`);
}

/** That there is nothing to show: an empty journal, or none of its acts asked for. */
function nothingWords({ words, options }: Asked): string {
  const [target] = words;
  const { since } = options;
  if (target === undefined && since === undefined) return 'the journal is empty: no act yet';
  const on = target === undefined ? '' : ` on ${target}`;
  const when = since === undefined ? '' : ` in the last ${since.typed}`;
  return `the journal has no act${on}${when}`;
}
