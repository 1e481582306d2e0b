/** What berth answered, captured in the same run, for the baselines to answer byte for byte. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Answers {
  /** The 404, its body with `{method}` and `{path}` where berth names them. */
  notFound: Answer;
  unauthorized: Answer;
  /** `both node and module are needed`, and `node is needed`. */
  needsBoth: Answer;
  needsNode: Answer;
}

export const ROUTES = ['/assign', '/unassign', '/take', '/converge', '/adopt'] as const;
export const NEEDS_MODULE = new Set(['/assign', '/unassign', '/take']);

/** The bearer token the baselines (and berth's accept-all server) take as "authenticated". */
export const ACCEPT_TOKEN = 'accept';

export function answersFromEnv(): Answers {
  return JSON.parse(process.env.BENCH_ANSWERS ?? '') as Answers;
}

/** The 404 body naming what was asked for, as berth builds it: from words known at start. */
export function notFoundBody(answers: Answers, method: string, path: string): string {
  const template = notFoundWords.get(answers) ?? notFoundWordsOf(answers);
  return JSON.stringify({
    refused: template.replace('{method}', method).replace('{path}', path),
  });
}

const notFoundWords = new WeakMap<Answers, string>();
function notFoundWordsOf(answers: Answers): string {
  const words = (JSON.parse(answers.notFound.body) as { refused: string }).refused;
  notFoundWords.set(answers, words);
  return words;
}

/** Serves until the parent says stop (its stdin closes), and tells it the port. */
export function announce(port: number) {
  process.stdout.write(`listening ${port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}
