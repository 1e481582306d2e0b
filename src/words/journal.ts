import type { JournaledResult } from '../model/journaled.ts';
import type { JournalEntry } from '../stores/stores.ts';
import { blockerReport } from './blockers.ts';
import { refreshedWords } from './packages.ts';
import { refusedWords } from './refusals.ts';
import { saidOf } from './said.ts';

/**
 * A journal entry's words, made when it is read: what the act said (`said`) and why it was
 * refused or stopped (`error`), from its typed result and refusal, with the renderer its
 * answer was said with at the time. An earlier berth's entry keeps the words it was
 * written with, shown as they were.
 */
export function entryWords(entry: JournalEntry): { said: string; error?: string } {
  if (entry.entry_version !== 3) return { said: entry.said, error: entry.error };
  return { said: resultWords(entry.result), error: refusedWords(entry.refusal) };
}

function resultWords(result: JournaledResult | undefined): string {
  switch (result?.command) {
    case undefined:
      return '';
    case 'refresh':
      return refreshedWords(result.node);
    case 'ca': {
      const named =
        result.named === undefined ? '' : ` (${result.named.subject}, until ${result.named.until})`;
      return `made the state's CA${named}: it signs the certificates of tls secrets`;
    }
    default:
      return saidOf({ result });
  }
}

/**
 * An entry as `berth log --json` prints it: its fields as written, its words in `said` and
 * `error` in place of its typed result and refusal, so that what a script reads is the
 * same whichever version wrote the entry.
 */
export function entryShown(entry: JournalEntry) {
  if (entry.entry_version !== 3) return entry;
  const { result: _result, refusal: _refusal, blockers, ...kept } = entry;
  const { said, error } = entryWords(entry);
  return {
    ...kept,
    ...(blockers === undefined
      ? {}
      : { blockers: blockers.map((blocker) => blockerReport(blocker, entry.node)) }),
    said,
    ...(error === undefined ? {} : { error }),
  };
}
