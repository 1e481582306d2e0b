import { didYouMean, withHint } from '../utils/did-you-mean.ts';
import { type HabitCommand, habitAnswer } from './habits.ts';

/** A command line berth refuses before any command runs: what was wrong, as a value. */
export type UsageRefusal =
  | { kind: 'no-command'; typed: string; known: readonly string[] }
  | {
      kind: 'unknown-option';
      /** The command it was given to, or undefined for berth itself. */
      command: HabitCommand | undefined;
      /** The flag as it was typed (`--full-dif`, `-l`). */
      option: string;
      /** The flags the command (or berth) has, for a likely meaning. */
      known: readonly string[];
    }
  | { kind: 'extra-word'; command: string; takes: readonly string[]; word: string }
  /** A word mri read as a number (one after a flag: `--yes 007`), which a name never is. */
  | { kind: 'number-word'; command: string; number: number };

/** A refusal in berth's words: the command, the word, a likely meaning or berth's way. */
export function usageWords(refusal: UsageRefusal): string {
  switch (refusal.kind) {
    case 'no-command':
      return withHint(
        `berth has no command ${JSON.stringify(refusal.typed)}`,
        didYouMean(refusal.typed, refusal.known),
        'see berth help',
      );
    case 'unknown-option': {
      const { command, option } = refusal;
      const where = command ? `berth ${command.name}` : 'berth';
      const habit = command && habitAnswer(command, option);
      if (habit) return `${where} has no option ${option}: ${habit}`;
      const help = command ? `see berth help ${command.name}` : 'see berth help';
      return withHint(`${where} has no option ${option}`, didYouMean(option, refusal.known), help);
    }
    case 'extra-word': {
      const takes = refusal.takes.length
        ? `takes ${refusal.takes.map((word) => `[${word}]`).join(' ')}`
        : 'takes no word';
      return `berth ${refusal.command} ${takes}; ${JSON.stringify(refusal.word)} is one word too many`;
    }
    case 'number-word':
      return `berth ${refusal.command}: the option parser read a word after a flag as the number ${refusal.number}, as it reads 007, 1e3 or 0x10 there; give names before the options, or after --`;
  }
}
