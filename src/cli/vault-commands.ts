import type { Refused } from '../commands/reading-answer.ts';
import type { RekeyAnswer, RekeyState } from '../commands/rekey-state.ts';
import type { SecretAnswer } from '../commands/secret-value.ts';
import { enveloped } from '../model/result.ts';
import { answerOf } from '../words/answer.ts';
import type { AnswerWords } from './answer-words.ts';

/**
 * `berth rekey [node]` in words: the state's CA first (sealed again, or why not), then
 * what each node's rekey said and, on standard error, what was refused.
 */
export const rekeyWords: AnswerWords<RekeyState | Refused> = {
  words(state, _asked, io) {
    const answer = rekeyAnswer(state);
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
  json: (state) => JSON.stringify(rekeyAnswer(state)),
};

/** A rekey's answer as `--json` prints it: what each node said, and the state's CA. */
function rekeyAnswer(state: RekeyState | Refused): RekeyAnswer {
  if ('refused' in state) return state;
  const { ran, ca, code } = state;
  const nodes = ran ? answerOf(ran) : enveloped({ said: '', nodes: {} });
  return {
    ...nodes,
    ...(code && { code }),
    ...(ca && {
      ca: ca.unopened
        ? {
            resealed: false,
            refused:
              "berth's identity cannot open the key of the state's CA; kept as sealed before: rekey again with an identity it was sealed to",
          }
        : { resealed: ca.resealed },
    }),
  };
}

/**
 * `berth secret <node> <module> <name>`: the kept value on standard output (one line: a
 * file's last newline is not doubled), and nothing else there.
 */
export const secretWords: AnswerWords<SecretAnswer> = {
  words(answer, _asked, io) {
    if ('value' in answer) io.out(answer.value);
  },
};
