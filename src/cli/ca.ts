import type { CaAnswer } from '../commands/ca.ts';
import type { AnswerWords } from './answer-words.ts';

/** `berth ca` in words: the certificate alone on standard output, and if it was made now, so. */
export const caWords: AnswerWords<CaAnswer> = {
  words(answer, _asked, io) {
    if ('refused' in answer) return;
    if (answer.made) io.err("berth made the state's CA: it signs the certificates of tls secrets");
    io.out(answer.certificate.trimEnd());
  },
};
