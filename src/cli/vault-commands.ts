import type { RekeyAnswer } from '../commands/rekey-state.ts';
import type { SecretAnswer } from '../commands/secret-value.ts';
import type { AnswerWords } from './answer-words.ts';

/**
 * `berth rekey [node]` in words: the state's CA first (sealed again, or why not), then
 * what each node's rekey said and, on standard error, what was refused.
 */
export const rekeyWords: AnswerWords<RekeyAnswer> = {
  words(answer, _asked, io) {
    if (!('said' in answer)) return;
    const { ca } = answer;
    if (ca?.refused !== undefined) io.err(ca.refused);
    else if (ca?.resealed) io.out("sealed the state's CA again to the recipients of now");
    if (Object.keys(answer.nodes).length === 0 && answer.refused === undefined) {
      io.out(
        ca
          ? 'no node has records: nothing else to seal again'
          : 'no node has records: nothing to seal again',
      );
      return;
    }
    if (answer.said) io.out(answer.said);
    if (answer.refused) io.err(answer.refused);
  },
};

/**
 * `berth secret <node> <module> <name>`: the kept value on standard output (one line: a
 * file's last newline is not doubled), and nothing else there.
 */
export const secretWords: AnswerWords<SecretAnswer> = {
  words(answer, _asked, io) {
    if ('value' in answer) io.out(answer.value);
  },
};
