import type { AnswerWords } from './answer-words.ts';

/** `berth openapi`: the Command API's OpenAPI 3.1 document, indented, with `--json` too. */
export const openApiWords: AnswerWords<Record<string, unknown>> = {
  words: (document, _asked, io) => io.out(JSON.stringify(document, null, 2)),
  json: (document) => JSON.stringify(document, null, 2),
};
